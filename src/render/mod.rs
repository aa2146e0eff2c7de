//! Output formats. Renderers read the model and layouts; they never read DWARF.

pub mod cdecl;
pub mod json;
pub mod text;
