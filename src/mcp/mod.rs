//! `traceprism mcp`: the Model Context Protocol face. An MCP server on stdio (JSON-RPC 2.0, a
//! message a line) built on the official Rust SDK (`rmcp`), whose tools ([`tools`]) answer what the
//! CLI's commands answer, from the same library calls. Opened traces are kept ([`cache`]), so an
//! agent's questions about one trace read it once. A failing call (a missing file, an unknown
//! table, a broken trace) is an error answer with the CLI's message, and the server goes on
//! serving; it exits 0 when its input closes.

mod cache;
mod page;
mod tools;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::{Arc, Mutex};

/// What an agent is told when it connects.
const INSTRUCTIONS: &str = "traceprism reads GPU profiler traces of LLM inference (torch.profiler/Kineto .json or .json.gz, JAX/TensorFlow .xplane.pb, Nsight Systems `nsys export --type sqlite` files): phases (prefill/decode), transformer layers, kernel categories, what to fix first (`findings`), GPU time by source line and call path (the `sources` and `call_paths` tables), comparisons of two traces, all ranks of a run, and a regression gate. Start with `summary` on a trace; read tables with `tables` then `table` (a page at a time); `doctor` says what the trace lacks. Times are microseconds. Paths are read on this machine; nothing is uploaded.";

/// The server: the tools and the traces they keep open.
#[derive(Clone)]
struct Server {
    cache: Arc<Mutex<cache::Cache>>,
}

fn tool_list() -> Vec<Tool> {
    tools::TOOLS
        .iter()
        .map(|t| {
            let schema = match (t.schema)() {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            Tool::new(t.name, t.description, Arc::new(schema))
        })
        .collect()
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("traceprism", env!("CARGO_PKG_VERSION"))
                    .with_description("GPU profiler traces of LLM inference: phases, layers, kernels, ranks, comparisons"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let cache = self.cache.clone();
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        // Reading a trace takes seconds: off the protocol's thread.
        let answered = tokio::task::spawn_blocking(move || {
            let mut cache = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            tools::call(&name, &args, &mut cache)
        })
        .await;
        let result = match answered {
            Ok(Ok(tools::Answer::Json(v))) => CallToolResult::structured(v),
            Ok(Ok(tools::Answer::JsonWithText(v, text))) => {
                let mut r = CallToolResult::structured(v);
                r.content = vec![ContentBlock::text(text)];
                r
            }
            Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(format!("traceprism: error: {e}"))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("traceprism: error: the call failed: {e}"))]),
        };
        Ok(result.into())
    }
}

/// Runs the server on stdin/stdout until stdin closes; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    if let Some(extra) = args.first() {
        eprintln!(
            "traceprism: error: `mcp` takes no arguments, not '{extra}' (it serves the Model Context Protocol on stdin/stdout)"
        );
        return 2;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("traceprism: error: cannot start: {e}");
            return 1;
        }
    };
    let server = Server { cache: Arc::new(Mutex::new(cache::Cache::new())) };
    let served = runtime.block_on(async move {
        let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())
    });
    match served {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("traceprism: error: mcp: {e}");
            1
        }
    }
}
