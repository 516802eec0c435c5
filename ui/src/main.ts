import { mount } from 'svelte';
import App from './App.svelte';
import { detectBackend } from './ipc';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('#app element missing from index.html');

detectBackend().then((backend) => {
  mount(App, { target, props: { backend } });
});
