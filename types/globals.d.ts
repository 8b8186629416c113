// What the page hangs on `window` for the benchmark and the tests (no trace content).
interface Window {
  traceprismTiming: Record<string, any>;
  traceprismTimeline?: Record<string, any>;
  traceprismGzipPipeline?: string;
  traceprismFrameIntervals?: number[];
  traceprismStopFrames?: boolean;
}
