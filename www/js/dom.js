// DOM helpers. Everything that comes from a trace goes in as text (textContent / attributes set
// as properties), never as HTML.

/**
 * Creates an element. `props`: class, title, text, attrs (object), on (object of listeners), and
 * any other key is set as a property. Children: nodes or strings (strings become text nodes).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  applyProps(node, props);
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element; same props as `el`. */
export function svg(tag, props = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  applyProps(node, props);
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function applyProps(node, props) {
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') node.setAttribute('class', v);
    else if (k === 'text') node.textContent = String(v);
    else if (k === 'attrs') for (const [a, av] of Object.entries(v)) node.setAttribute(a, String(av));
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else if (k === 'title' && node instanceof SVGElement) node.append(svgTitle(v));
    else node[k] = v;
  }
}

function svgTitle(text) {
  const t = document.createElementNS(SVG_NS, 'title');
  t.textContent = String(text);
  return t;
}

/** Removes all children. */
export function clear(node) {
  node.replaceChildren();
  return node;
}
