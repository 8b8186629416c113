// Categories: kernel time by category and by family, then the category tables.
import { el } from '../dom.js';
import { barChart, colour } from '../charts.js';
import { renderTables, groupRollup } from './common.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace'];

/** Renders the categories view. */
export async function categories(ctx, root) {
  root.append(el('h2', { text: 'Kernel categories' }));
  const r = await ctx.rollup();
  // Colours by family name, the same in every view, trace and the HTML report (rules/palette.rs).
  const famColour = (f) => r.family_colours[f] || colour(0);
  const byCat = [...groupRollup(r, (i) => r.category[i])].map(([c, g]) => ({ label: r.categories[c], value: g.dur, colour: famColour(r.families[c]), title: `${r.categories[c]} (${r.families[c]}, ${g.count} kernels)` }));
  const byFam = [...groupRollup(r, (i) => r.families[r.category[i]])].map(([f, g]) => ({ label: f, value: g.dur, colour: famColour(f), title: `${f} (${g.count} kernels)` }));
  byCat.sort((a, b) => b.value - a.value);
  byFam.sort((a, b) => b.value - a.value);
  root.append(el('h3', { text: 'Kernel time by family' }), barChart(byFam));
  root.append(el('h3', { text: 'Kernel time by category' }), barChart(byCat));
  await renderTables(ctx, 'categories', root);
}
