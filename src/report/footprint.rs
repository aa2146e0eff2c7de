//! `footprint`'s result: per build and struct, the cachelines each context
//! touches, as plain data.

use serde::Serialize;

/// A whole `footprint` run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FootprintReport {
    /// Per build, in the order given.
    pub builds: Vec<BuildFootprint>,
    /// Notes (types a build lacks, rules that fit nothing).
    pub notes: Vec<String>,
}

/// One build.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BuildFootprint {
    /// Config label.
    pub config: String,
    /// The file.
    pub file: String,
    /// Per struct.
    pub types: Vec<TypeFootprint>,
}

/// One struct of one build.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TypeFootprint {
    /// The struct.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Line size.
    pub cacheline: u64,
    /// Its size in lines.
    pub size_lines: u64,
    /// Per context, then their union.
    pub contexts: Vec<ContextRow>,
    /// Members the rules name that this build lacks (`FILE:LINE: name`):
    /// counted in no context.
    pub absent: Vec<String>,
}

/// One context's footprint.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ContextRow {
    /// The context (`tx`), or the union (`tx+rx`).
    pub context: String,
    /// The fields it uses, by path.
    pub fields: Vec<String>,
    /// Bytes of those fields.
    pub bytes: u64,
    /// The lines they occupy, counted from the struct's start.
    pub lines: Vec<u64>,
    /// The fewest lines the bytes fit in.
    pub optimum: u64,
    /// `--perf`: the samples on its fields' bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
}
