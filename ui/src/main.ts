import { mount } from 'svelte';
import App from './App.svelte';
import { detectBackend } from './ipc';
import './app.css';
import { mark } from './lib/startup';

mark('script');

const target = document.getElementById('app');
if (!target) throw new Error('#app element missing from index.html');

detectBackend().then((backend) => {
  mark('backend');
  mount(App, { target, props: { backend } });
  mark('mounted');
  // The first frame WebKit gives the page (the shell alone, before the queue is read).
  requestAnimationFrame(() => mark('first_frame'));
});
