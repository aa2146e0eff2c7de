//! Output formats. Renderers read the model, layouts and reports; they never read DWARF.

pub mod cdecl;
pub mod diagnostics;
pub mod diagram;
pub mod json;
pub mod sarif;
pub mod text;
