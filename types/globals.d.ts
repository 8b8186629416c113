// What the page hangs on `window` for the benchmark and the tests (no trace content).
interface Window {
  traceprismTiming: Record<string, any>;
  traceprismTest: { call: (op: string, data?: Record<string, unknown>) => Promise<any> };
  traceprismTimeline?: Record<string, any>;
  traceprismGzipPipeline?: string;
  traceprismNoSizeLimit?: boolean;
  traceprismFrameIntervals?: number[];
  traceprismStopFrames?: boolean;
}
