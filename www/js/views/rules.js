// Rules: the kernel-category rules in use, and the user's own rules (the CLI's `--rules` TOML),
// applied live: the worker categorises the trace it holds again, without reading the file. The
// user's rules are kept in this browser (localStorage) and used for every trace loaded after.
import { el } from '../dom.js';
import { errorLine, countRules } from '../rules-text.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['rules'];

/** Renders the rules view. */
export async function rules(ctx, root) {
  root.append(el('h2', { text: 'Kernel-category rules' }),
    el('p', { class: 'note', text: 'Your rules go first, in the same TOML format as `traceprism --rules FILE`: the first rule whose conditions all hold decides a kernel\'s category. Applying them analyses the loaded trace again here; they are kept in this browser and go into the exports (rules.toml in the zip).' }));
  const editor = el('textarea', { class: 'rules-editor', attrs: { 'data-testid': 'rules-editor', spellcheck: 'false', rows: '14', 'aria-label': 'your category rules (TOML)' } });
  editor.value = ctx.userRules();
  const status = el('div', { class: 'rules-status', attrs: { 'data-testid': 'rules-status', role: 'status' } });
  const apply = el('button', { attrs: { type: 'button', 'data-testid': 'rules-apply' }, text: 'Apply' });
  const clearButton = el('button', { attrs: { type: 'button' }, text: 'Remove my rules' });
  const example = '[[category]]\nname = "My GEMM"\nfamily = "GEMM"\nabout = "kernels I want to see apart"\n\n[[rule]]\ncategory = "My GEMM"\npattern = "^Cijk_"\nnote = "Tensile GEMMs"\n';
  const exampleButton = el('button', { attrs: { type: 'button' }, text: 'Insert an example' });
  exampleButton.addEventListener('click', () => { if (!editor.value.trim()) editor.value = example; editor.focus(); });
  const run = async (text) => {
    status.className = 'rules-status';
    status.textContent = 'applying…';
    try {
      await ctx.applyRules(text);
      const n = countRules(text);
      status.textContent = text.trim() ? `applied: ${n.rules} rule(s), ${n.categories} categor${n.categories === 1 ? 'y' : 'ies'}, ${n.sequences} sequence(s) of yours before the built-in table` : 'built-in rules only';
    } catch (err) {
      const line = errorLine(err.message, text);
      status.className = 'rules-status error';
      status.textContent = line ? `line ${line}: ${err.message}` : err.message;
      status.dataset.line = line ? String(line) : '';
    }
  };
  apply.addEventListener('click', () => run(editor.value));
  clearButton.addEventListener('click', () => { editor.value = ''; run(''); });
  root.append(el('h3', { text: 'Your rules' }), editor, el('div', { class: 'rules-bar' }, apply, ' ', clearButton, ' ', exampleButton), status);
  const builtin = await ctx.builtinRules();
  root.append(el('details', { class: 'folded-table' }, el('summary', { text: `Built-in rules (${countRules(builtin).rules} rules, tried after yours)` }),
    el('pre', { class: 'rules-builtin', text: builtin })));
}
