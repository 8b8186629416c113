// Declarations of the SQLite module (sqlite/, built by wasm-pack into dist/pkg-sqlite/), for the
// type check only: the worker imports it when an Nsight Systems export arrives.
export default function init(module?: any): Promise<any>;
/** The tables `requests` asks for (one line per table: its name, then its columns), as row bytes. */
export function dump_tables(database: Uint8Array, requests: string): Uint8Array;
/** The SQLite library's version. */
export function sqlite_version(): string;
