// Types of the wasm core's module as the page uses it (wasm-pack builds it into dist/pkg/ with
// --no-typescript): enough for `tsc --checkJs` to check the calls into the core.
export default function init(module?: unknown): Promise<unknown>;
export class Analyzer {
  constructor(optionsJson: string, sniffed?: Sniffed);
  free(): void;
  [method: string]: any;
  static memory_bytes(): number;
}
export class TextPart {
  constructor(bare: boolean, start: number);
  free(): void;
  [method: string]: any;
}
export class Inflater {
  constructor(blockBytes: number);
  free(): void;
  [method: string]: any;
}
export class CaptureTrace {
  constructor(bytes: Uint8Array, label: string, batchSize?: number, mode?: string);
  free(): void;
  graphs(): number;
}
export class RankRun {
  constructor();
  free(): void;
  add(analyzer: Analyzer, file: string): void;
  len(): number;
  analyse(align: boolean): any;
  [method: string]: any;
}
export function compare(a: Analyzer, b: Analyzer, optionsJson: string): any;
export function digest(a: Analyzer, source: string): string;
export function gate(baseJson: string, newJson: string, optionsJson: string): any;
export function watch_window(digestJson: string, file: string): any;
export function builtin_category_rules(): string;
/** The options the page's settings are made from, as the core declares them (JSON text: {analysis, compare}). */
export function declared_options(): string;
export function nsys_requests(): string;
export function failed_allocation_bytes(): number;
export function allocate_for_test(megabytes: number): number;
/** What a file is from its first bytes (`ingest::sniff`): gzip, json, xspace, nsys, nsys_rows or unknown. */
/** What the core said of a file's first bytes (`ingest::sniff`). */
export interface Sniffed {
  format: 'gzip' | 'json' | 'xspace' | 'nsys' | 'nsys_rows' | 'digest' | 'unknown';
  form: 'array' | 'object' | null;
  /** How the core reads it (read::Reading): the worker's strategy. */
  reading: 'parts' | 'inflate' | 'rows' | 'stream';
}
export function sniff(head: Uint8Array): Sniffed;
export function watch_names(names: string[]): { candidate: boolean; group: string | null }[];
export function find_event_start(window: Uint8Array, from: number): number;
export function warm_up(steps: number): void;
export function warm_up_part(steps: number): void;
export function warm_up_inflate(steps: number): void;
export function warm_up_rules(): void;
