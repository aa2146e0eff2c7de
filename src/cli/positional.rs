//! The positional arguments that name builds (FILE or NAME=FILE): where
//! the builds end and the types or paths begin, by one classifier
//! ([`cachelint::run::is_build_arg`]), and the one error every command
//! gives for a type where a build goes.

use cachelint::commands::Build;
use cachelint::error::{Error, Result};
use cachelint::run::is_build_arg;

/// What a command takes after its builds.
#[derive(Clone, Copy)]
pub(crate) enum After {
    /// Positional arguments, such as "the types".
    Then(&'static str),
    /// Nothing: the builds are the only positional arguments, and this
    /// says where the types come from.
    Only(&'static str),
}

/// What follows a run of builds of any length: `BUILD... TYPE...`
/// (`suggest`, `draft`) or `BUILD... PATH...` (`offsets`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rest {
    /// Type names: `NAME`, `NAME#N`, `NAME@FILE` (which may hold a '/').
    Types,
    /// Member paths: `TYPE.member[index]...`, never with a '=' or a '/'.
    Paths,
}

impl Rest {
    /// What follows the builds, as the errors say it.
    fn after(self) -> After {
        After::Then(match self {
            Rest::Types => "the types",
            Rest::Paths => "the paths",
        })
    }
}

/// Splits `items` into the builds, the arguments up to the first that is
/// not one ([`is_build_arg`]), and the types or paths after them.
///
/// The two rests differ where their arguments do. A path holds no '=' or
/// '/', so such an argument among paths is a build, and one whose file is
/// not there a missing file; every argument a build is no path given; and
/// a build after a path is out of place. A type may hold a '/'
/// (`NAME@FILE`): every argument a build, the last is the type (and the
/// command says it is a file); only NAME=FILE after a type is a build out
/// of place.
pub(crate) fn builds_then(items: &[String], rest: Rest) -> Result<(Vec<Build>, Vec<String>)> {
    if rest == Rest::Paths
        && let Some(missing) = items.iter().find_map(|s| {
            let file = s.split_once('=').map_or(s.as_str(), |(_, f)| f);
            let named = s.contains('=') || s.contains('/');
            let path = std::path::Path::new(file);
            let there = path.is_file() || cachelint::run::one_variant(path).is_some();
            (named && !there).then_some(file)
        })
    {
        return Err(Error::Usage(format!("{missing}: no such file")));
    }
    let split = match items.iter().position(|s| !is_build_arg(s)) {
        Some(split) => split,
        None if rest == Rest::Types => items.len() - 1,
        None => {
            return Err(Error::Usage(
                "no path given: after the builds, name paths such as lruvec.lru_lock".into(),
            ));
        }
    };
    let (builds, tail) = items.split_at(split);
    if builds.is_empty() {
        return Err(not_a_build(
            items.first().map_or("", String::as_str),
            rest.after(),
        ));
    }
    let late = match rest {
        Rest::Types => tail.iter().find(|t| t.contains('=')),
        Rest::Paths => tail.iter().find(|p| is_build_arg(p)),
    };
    if let Some(late) = late {
        let what = match rest {
            Rest::Types => "type",
            Rest::Paths => "path",
        };
        return Err(Error::Usage(format!(
            "'{late}' looks like a build after a {what}: builds come first"
        )));
    }
    Ok((parse_builds(builds, rest.after())?, tail.to_vec()))
}

/// The builds named on the command line, where a type name stands in
/// their place (`then`: what follows the builds).
pub(crate) fn parse_builds(items: &[String], then: After) -> Result<Vec<Build>> {
    items.iter().map(|b| build_arg(b, then)).collect()
}

/// A BUILD argument (FILE or NAME=FILE), checked by [`build_first`].
pub(crate) fn build_arg(text: &str, then: After) -> Result<Build> {
    build_first(
        text.split_once('=').map_or(text, |(_, file)| file),
        text,
        then,
    )?;
    Build::parse(text)
}

/// A C identifier `name` (the file of argument `text`) where no such file
/// is, is a type given before the builds: every command says so alike,
/// with what should follow the builds (`then`).
pub(crate) fn build_first(name: &str, text: &str, then: After) -> Result<()> {
    let identifier = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match identifier && !std::path::Path::new(name).exists() {
        true => Err(not_a_build(text, then)),
        false => Ok(()),
    }
}

/// The error of a type name where a build goes.
fn not_a_build(text: &str, after: After) -> Error {
    Error::Usage(match after {
        After::Then(then) => format!(
            "'{text}' is not a file: the builds (FILE or NAME=FILE) come first, then {then}"
        ),
        After::Only(types) => {
            format!("'{text}' is not a file: only builds (FILE or NAME=FILE) go here; {types}")
        }
    })
}
