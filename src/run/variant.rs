//! A variant as a build of a run: built (or found in the cache) when the
//! run opens it, for exactly the types the run wants, then read as the
//! DWARF file it compiled to.

use std::sync::{Arc, Mutex};

use super::Input;
use crate::error::Result;
use crate::kconfig::KernelConfig;
use crate::load::{Build, Loaded, Reading, SourceRoot};
use crate::variant::{Built, Variant, Wanted};

/// One variant of a variant file, labelled.
pub(super) struct VariantInput {
    /// Its label and its variant file.
    build: Build,
    variant: Variant,
    /// The build once made: opening it again (for a message) reads it.
    built: Mutex<Option<Built>>,
}

impl VariantInput {
    pub(super) fn new(label: String, variant: Variant) -> VariantInput {
        VariantInput {
            build: Build {
                config: label,
                path: variant.spec.file.clone(),
            },
            variant,
            built: Mutex::new(None),
        }
    }
}

impl Input for VariantInput {
    fn build(&self) -> &Build {
        &self.build
    }

    fn key(&self) -> String {
        // A review holds each variant twice, the second patched.
        let patch = self.variant.spec.patch.as_deref();
        format!(
            "{}#{}#{}",
            self.build.path.display(),
            self.variant.name(),
            patch.map_or_else(String::new, |p| p.display().to_string())
        )
    }

    fn with_patch(&self, patch: &str) -> Option<Result<Arc<dyn Input>>> {
        let variant = self.variant.patched(patch)?;
        Some(
            variant.map(|v| {
                Arc::new(VariantInput::new(self.build.config.clone(), v)) as Arc<dyn Input>
            }),
        )
    }

    fn open(
        &self,
        reading: &Reading,
        wanted: &Wanted,
        f: &mut dyn FnMut(&mut Loaded<'_, '_>) -> Result<()>,
    ) -> Result<()> {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        let made = match &*built {
            Some(made) => made.clone(),
            None => built.insert(self.variant.build(wanted)?).clone(),
        };
        drop(built);
        let object = Build {
            config: self.build.config.clone(),
            path: made.object,
        };
        // The probe lives in the cache, so its own path says nothing of
        // the kernel's source root: that is the variant's tree.
        let mut reading = reading.clone();
        if reading.source_root == SourceRoot::Detect {
            reading.source_root = SourceRoot::Dir(self.variant.tree.display().to_string());
        }
        let config =
            std::fs::read_to_string(&made.config).map_err(|e| crate::error::Error::Io {
                path: made.config.clone(),
                source: e,
            })?;
        crate::load::open(&object, &reading, |loaded| {
            loaded.add_notes(made.notes);
            loaded.set_config(KernelConfig {
                source: "the variant's .config".to_owned(),
                options: crate::kconfig::parse(&config),
            });
            f(loaded)
        })
    }
}
