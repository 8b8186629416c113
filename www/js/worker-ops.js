// Every request the page sends the core's worker, declared once: its arguments and its answer.
// `tsc --checkJs` holds both ends to it: `Session.call(op, args)` (js/session.js) takes an op's
// arguments and resolves to its answer, and the worker's `ops` (worker.js) must handle exactly
// these ops with these arguments. A slot is `a` (the trace the views show, the default), `b` (the
// second trace of a comparison) or `rN` (a rank of a run). The worker posts `{id, progress}` while
// `open` reads. No op takes or answers a file's format: the worker tells it, from the file.
export {};

/** @typedef {{slot?: string}} InSlot */
/** @typedef {{columns: string[], rows: any[][], [more: string]: any}} TableData */
/** What the analyses say of a finished trace. */
/** @typedef {{summary: any, tables: string[], views: any, memory?: number}} Finished */
/** A file opened: what `Finished` says, with how workers shared its reading or what the SQLite module did. */
/** @typedef {Finished & {parallel?: any, nsys?: any}} Opened */
/** @typedef {{window?: any, cut?: string}} WatchedFile */
/**
 * An option as the core declares it (`declared_options`): the page's settings are made from these.
 * @typedef {{field: string, keyword: string, flags: string[], kind: string, choices: string[]|null, default: any, doc: string}} DeclaredOption
 */
/** @typedef {{analysis: DeclaredOption[], compare: DeclaredOption[]}} DeclaredOptions */

/**
 * Each op: `[arguments, answer]`.
 * @typedef {{
 *   admit: [{files: {file: Blob, name: string}[], noLimit: boolean}, string | null],
 *   open: [InSlot & {options: object, file: Blob, gzipPipeline?: string}, Opened],
 *   captures: [InSlot & {files: {file: Blob, name: string, batch?: number|null, mode?: string|null}[]}, {name: string, graphs: number}[]],
 *   table: [InSlot & {name: string}, TableData],
 *   csv: [InSlot & {name: string}, string],
 *   rollup: [InSlot, any],
 *   timelineMeta: [InSlot, any],
 *   timelinePyramid: [InSlot & {lane: number}, any],
 *   timelineBuckets: [InSlot & {from: number, to: number, width: number}, ArrayBuffer],
 *   timelineHit: [InSlot & {lane: number, at: number, slack: number}, any],
 *   setRules: [InSlot & {toml: string}, {summary: any, tables: string[], views: any}],
 *   builtinRules: [{}, string],
 *   declaredOptions: [{}, DeclaredOptions],
 *   split: [InSlot & {window: object, file: Blob}, ArrayBuffer],
 *   workbook: [InSlot, ArrayBuffer],
 *   html: [InSlot, string],
 *   drop: [InSlot, null],
 *   compare: [{options: object}, {tables: string[], headline: string, labels: string[]}],
 *   compareTable: [{name: string}, TableData],
 *   compareCsv: [{name: string}, string],
 *   digest: [InSlot & {source: string}, string],
 *   gate: [{base: string, candidate: string, options: object}, {report: any, markdown: string}],
 *   watchFile: [{file: Blob, name: string, options: object}, WatchedFile],
 *   watchRun: [{files: {file: Blob, name: string}[], options: object}, WatchedFile & {straggler?: string|null}],
 *   watchNames: [{names: string[]}, {candidate: boolean, group: string|null}[]],
 *   memory: [{}, number],
 *   runStart: [{}, null],
 *   runAdd: [InSlot & {name: string}, number],
 *   runAnalyse: [{align: boolean}, any],
 *   runTable: [{name: string}, TableData],
 *   runCsv: [{name: string}, string],
 *   runLanes: [{}, any],
 *   runWorkbook: [{}, ArrayBuffer],
 *   runHtml: [{}, string],
 *   testAllocate: [{megabytes: number}, number],
 * }} WorkerOps
 */

/**
 * The worker's handler of each op: its arguments (with the request's `id`) to its answer, or a
 * Transfer of the answer's buffer.
 * @typedef {{[K in keyof WorkerOps]: (data: WorkerOps[K][0] & {id?: number}, id?: number) => any}} WorkerHandlers
 */
