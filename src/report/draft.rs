//! What `draft` found: a rules file's worth of classes, each with the
//! evidence that backs it. The analysis drafts it, so it owns the types.

pub use crate::analysis::draft_types::{
    DraftContext, DraftField, DraftPlacement, DraftReport, DraftRule, DraftType, Evidence, Mark,
};
