import { logger } from "./logger";

export interface Item {
  sku: string;
  price: number;
  quantity: number;
}

export class Cart {
  private items: Item[] = [];

  add(item: Item): void {
    console.log("adding", item.sku);
    this.items.push(item);
  }

  total(): number {
    const sum = this.items.reduce((acc, item) => acc + item.price * item.quantity, 0);
    console.log("total", sum);
    return sum;
  }

  clear(): void {
    logger.info("cart cleared");
    this.items = [];
  }
}
