//! The code behind the GPU time: every kernel's time on its call path ([`call_paths`]: annotations,
//! Python frames, module ranges, the op chain), by source line ([`sources`]), and two traces' paths
//! side by side ([`differential`]).

pub mod call_paths;
pub mod differential;
pub mod sources;
