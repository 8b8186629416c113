// Report: the five plots of a TraceLens-style inference report (phase overview, per-phase time
// distribution, operation frequency, top bottlenecks, category breakdown), a roofline scatter with
// the device roofs, and the roofline tables. The downloads (.xlsx, HTML report) sit in the tab bar.
import { el } from '../dom.js';
import { barChart, stackedBars, rooflineScatter, colour } from '../charts.js';
import { formatCount, formatUs } from '../format.js';
import { renderTables, groupRollup, phaseColour } from './common.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace'];

const ROOFLINE_TABLES = ['roofline_gemm', 'roofline_grouped_gemm', 'roofline_attention', 'roofline_norm', 'roofline_elementwise'];
const TOP = 15;

/** Column accessor by name (undefined when the column is missing). */
function col(table, name) {
  const j = table.columns.indexOf(name);
  return (row) => (j < 0 ? undefined : row[j]);
}

/** Renders the report view. */
export async function report(ctx, root) {
  root.append(el('h2', { text: 'Report' }),
    el('p', { class: 'note', text: 'The plots of the standalone HTML report, interactive: hover a mark for the op and its numbers. "Download .xlsx" and "Download HTML report" (above) are made here in the browser by the same code as traceprism export --xlsx and traceprism report --html.' }));

  const s = ctx.summary;
  const r = await ctx.rollup();

  // 1. Phase overview: kernel time per phase (or the GPU time split when no phase was found).
  root.append(el('h3', { text: 'Phase overview' }));
  if (s.phases && s.phases.length) {
    root.append(barChart(s.phases.map((p) => ({
      label: `${p.phase} (${formatCount(p.passes)} passes)`, value: p.time_ms * 1000, colour: phaseColour(p.phase),
      title: `${p.phase}: ${formatCount(p.passes)} passes, ${formatCount(p.kernels)} kernels`,
    }))));
  } else {
    const t = (s.timeline || [])[0];
    root.append(el('p', { class: 'note', text: `No prefill/decode phases detected${s.trace_phase ? ` (trace: ${s.trace_phase})` : ''}; GPU time split instead.` }));
    if (t) {
      const us = (ns) => (ns || 0) / 1000;
      root.append(barChart([
        { label: 'compute', value: us(t.compute) },
        { label: 'exposed communication', value: us(t.exposed_comm) },
        { label: 'exposed memcpy', value: us(t.exposed_memcpy) },
        { label: 'micro idle', value: us(t.micro_idle) },
        { label: 'macro idle', value: us(t.idle) - us(t.micro_idle) },
      ]));
    }
  }

  // 2. Per-phase time distribution over kernel families (the HTML report's chart, its colours).
  root.append(el('h3', { text: 'Time distribution per phase (kernel families)' }));
  const phasesSeen = [...groupRollup(r, (i) => r.phase[i] ?? 'all kernels').keys()].sort();
  const stacks = phasesSeen.map((ph) => {
    const m = groupRollup(r, (i) => ((r.phase[i] ?? 'all kernels') === ph ? r.families[r.category[i]] : undefined));
    const parts = [...m].sort((a, b) => b[1].dur - a[1].dur || String(a[0]).localeCompare(String(b[0]))).map(([f, g]) => ({ label: String(f), value: g.dur, colour: r.family_colours[f] }));
    return { label: ph, parts };
  });
  root.append(stacks.length ? stackedBars(stacks) : el('p', { class: 'note', text: 'No kernels.' }));

  // 3 and 4. Operation frequency and top bottlenecks, from ops_summary.
  const ops = await ctx.table('ops_summary');
  const name = col(ops, 'name'), count = col(ops, 'Count'), kernels = col(ops, 'kernel_count');
  const ms = col(ops, 'total_direct_kernel_time_ms'), pct = col(ops, 'Percentage (%)');
  const byCount = ops.rows.slice().sort((a, b) => (count(b) - count(a)) || String(name(a)).localeCompare(String(name(b))));
  root.append(el('h3', { text: 'Operation frequency (ops by call count)' }),
    barChart(byCount.slice(0, TOP).map((row) => ({ label: String(name(row)), value: count(row), colour: colour(4), title: `${name(row)}: ${count(row)} calls, ${kernels(row)} kernels, ${formatUs(ms(row) * 1000)} GPU time` })),
      { format: (v) => `${formatCount(v)} calls`, max: TOP }));
  root.append(el('h3', { text: 'Top bottlenecks (ops by GPU time)' }),
    barChart(ops.rows.slice(0, TOP).map((row) => ({ label: String(name(row)), value: ms(row) * 1000, colour: colour(2), title: `${name(row)}: ${Number(pct(row)).toFixed(1)} % of GPU time, ${count(row)} calls, ${kernels(row)} kernels` })), { max: TOP }));

  // 5. Category breakdown.
  root.append(el('h3', { text: 'Kernel category breakdown' }),
    barChart([...groupRollup(r, (i) => r.category[i])].sort((a, b) => b[1].dur - a[1].dur).map(([c, g]) => ({ label: r.categories[c], value: g.dur, colour: r.family_colours[r.families[c]], title: `${r.categories[c]} (${r.families[c]}, ${formatCount(g.count)} kernels)` })), { max: 20 }));

  // 6. Roofline scatter with the device roofs.
  root.append(el('h3', { text: 'Roofline' }));
  const summaryTable = await ctx.table('roofline_summary');
  const first = summaryTable.rows[0];
  const sc = (n) => col(summaryTable, n);
  const roofs = [];
  if (first && typeof sc('peak bf16 TFLOPS/s')(first) === 'number') {
    const hbm = sc('peak HBM TB/s')(first);
    roofs.push({ name: 'bf16', peak: sc('peak bf16 TFLOPS/s')(first), bandwidth: hbm });
    const fp8 = sc('peak fp8 TFLOPS/s')(first);
    if (typeof fp8 === 'number' && fp8 > 0) roofs.push({ name: 'fp8', peak: fp8, bandwidth: hbm });
    root.append(el('p', { text: `Device roofs: ${sc('device')(first)} — dense peaks; each circle is one unique op call (name + shapes), sized by its share of GPU time.` }));
  } else {
    root.append(el('p', { class: 'note', text: 'Device unknown: no roof drawn.' }));
  }
  const families = [];
  const points = [];
  let gpuUs = 0;
  for (const g of groupRollup(r, () => 0).values()) gpuUs += g.dur;
  for (const tname of ROOFLINE_TABLES) {
    if (!ctx.tableNames.includes(tname)) continue;
    const t = await ctx.table(tname);
    const series = families.push(tname.replace(/^roofline_/, '')) - 1;
    const c = (n) => col(t, n);
    for (const row of t.rows) {
      const us = c('total_direct_kernel_time_us')(row);
      const bound = c('bound')(row);
      points.push({
        x: c('FLOPS/Byte')(row), y: c('TFLOPS/s')(row), weight: gpuUs > 0 ? us / gpuUs : 0, series,
        hover: `${c('name')(row)} [${c('precision')(row)}] ${c('shape')(row)} · ${c('operation_count')(row)} calls, ${formatUs(us)} total, ${formatUs(c('mean_direct_kernel_time_us')(row))} mean · ` +
          `${Number(c('FLOPS/Byte')(row)).toFixed(2)} FLOP/byte, ${Number(c('TFLOPS/s')(row)).toFixed(2)} TFLOP/s, ${Number(c('TB/s')(row)).toFixed(3)} TB/s` +
          (bound ? ` · ${bound}-bound, ${Number(c('% of roofline')(row)).toFixed(1)} % of roof` : ''),
      });
    }
  }
  root.append(points.length ? rooflineScatter(points, roofs, families) : el('p', { class: 'note', text: 'No GEMM, attention, norm or elementwise ops with shapes were found.' }));
  await renderTables(ctx, 'report', root);
}
