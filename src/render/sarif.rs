//! SARIF 2.1.0 for code-scanning dashboards: one result per finding, at the
//! declaration of its first field, with the second field as a related
//! location and a fingerprint that survives offset changes. The notes on
//! the rules and builds are tool notifications; the run's properties hold
//! the same summary as the JSON report.

use serde_json::{Value, json};

use crate::report::{Report, ReportFinding, ReportSide};
use crate::rules::Kind;

/// The SARIF log of a report.
pub fn report(report: &Report) -> Value {
    let rules: Vec<Value> = Kind::ALL
        .iter()
        .map(|k| {
            json!({
                "id": k.name(),
                "shortDescription": { "text": k.description() },
                "defaultConfiguration": { "level": k.default_severity().name() },
            })
        })
        .collect();
    let results: Vec<Value> = report.findings.iter().map(result).collect();
    log(
        rules,
        results,
        &report.notes,
        json!({ "summary": report.summary }),
    )
}

/// A SARIF log of one run of cachelint: its rules, its results, its notes
/// as tool notifications, and the run's properties.
pub(crate) fn log(
    rules: Vec<Value>,
    results: Vec<Value>,
    notes: &[String],
    properties: Value,
) -> Value {
    let notes: Vec<Value> = notes
        .iter()
        .map(|n| json!({ "level": "note", "message": { "text": n } }))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "cachelint",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notes,
            }],
            "properties": properties,
        }],
    })
}

fn result(f: &ReportFinding) -> Value {
    let id = f.identity();
    let fingerprint = format!(
        "{}/{}/{}/{}:{}/{}:{}",
        id.config,
        id.pair.root,
        id.pair.kind,
        id.pair.a,
        id.pair.a_class,
        id.pair.b,
        id.pair.b_class
    );
    let mut r = json!({
        "ruleId": f.kind,
        "level": f.severity,
        "message": { "text": format!("[{}] {}", f.config, super::diagnostics::headline(f)) },
        "partialFingerprints": { "cachelint/pair/v1": fingerprint },
        "properties": {
            "config": f.config,
            "root": f.root,
            "cacheline": f.cacheline,
            "cachelineBytes": f.cacheline_bytes,
            "a": f.a.part,
            "b": f.b.part,
        },
    });
    if let Some(loc) = location(&f.a) {
        r["locations"] = json!([loc]);
    }
    if let Some(mut loc) = location(&f.b) {
        loc["message"] = json!({ "text": format!("{} '{}'", f.b.class, f.b.path) });
        r["relatedLocations"] = json!([loc]);
    }
    r
}

fn location(side: &ReportSide) -> Option<Value> {
    Some(json!({
        "physicalLocation": {
            "artifactLocation": { "uri": side.decl_file.as_ref()? },
            "region": { "startLine": side.decl_line? },
        }
    }))
}
