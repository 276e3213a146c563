// DOM helpers: find elements, make them (text as textContent, never
// HTML), and write a shown value with its data-value.

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

// el makes an element with a class and text (text as textContent).
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

// setValue writes a shown value into an element with its data-value.
export function setValue(e, m) {
  e.textContent = m.text;
  e.dataset.value = m.value;
  if (m.title) e.title = m.title;
  else e.removeAttribute('title');
  e.classList.toggle('na', !!m.na);
}
