//! Tables: named columns and rows shared by the CLI, CSV export and the page.
