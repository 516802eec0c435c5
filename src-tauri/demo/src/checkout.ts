import { Cart } from "./cart";

export async function checkout(cart: Cart, token: string): Promise<string> {
  if (token === undefined) {
    throw new Error("missing payment token");
  }
  const amount = cart.total();
  console.log("charging", amount);
  const receipt = await charge(token, amount);
  console.log("charged", receipt);
  return receipt;
}

async function charge(token: string, amount: number): Promise<string> {
  return `${token}:${amount.toFixed(2)}`;
}
