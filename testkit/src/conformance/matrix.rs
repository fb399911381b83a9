//! The suite's result: kind × case → outcome, the totals of the audit, the printout, and the
//! verdict against the list of cases expected to fail until their defect is fixed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::audit::Audit;
use super::case_run::CaseResult;
use super::cases::Case;

/// What one (kind, case) recorded.
#[derive(Debug, Clone)]
pub enum Cell {
    NotApplicable(&'static str),
    Ran(CaseResult),
}

/// Every (kind, case): its runs (one per repetition) or why it does not apply.
#[derive(Debug, Default)]
pub struct Matrix {
    kinds: Vec<&'static str>,
    cells: BTreeMap<(&'static str, Case), Vec<Cell>>,
}

impl Matrix {
    pub fn record(&mut self, kind: &'static str, case: Case, cell: Cell) {
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
        self.cells.entry((kind, case)).or_default().push(cell);
    }

    fn runs(&self, kind: &'static str, case: Case) -> impl Iterator<Item = &CaseResult> {
        self.cells
            .get(&(kind, case))
            .into_iter()
            .flatten()
            .filter_map(|c| match c {
                Cell::Ran(r) => Some(r),
                Cell::NotApplicable(_) => None,
            })
    }

    /// Whether (kind, case) ran and any run of it failed or broke a guarantee.
    pub fn failed(&self, kind: &'static str, case: Case) -> bool {
        self.runs(kind, case)
            .any(|r| r.outcome.is_err() || !r.audit.is_clean())
    }

    /// The audit of (kind, case), all runs summed.
    pub fn audit(&self, kind: &'static str, case: Case) -> Audit {
        let mut total = Audit::default();
        for run in self.runs(kind, case) {
            total += run.audit;
        }
        total
    }

    /// The audit of every case.
    pub fn totals(&self) -> Audit {
        let mut total = Audit::default();
        for &(kind, case) in self.cells.keys() {
            total += self.audit(kind, case);
        }
        total
    }

    /// The table (cases down, kinds across), then what each failure was, then the totals.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let width = 24;
        let _ = write!(out, "{:width$}", "case");
        for kind in &self.kinds {
            let _ = write!(out, " {kind:>13}");
        }
        out.push('\n');
        for case in Case::all() {
            let _ = write!(out, "{:width$}", case.name());
            for &kind in &self.kinds {
                let cell = match self.cells.get(&(kind, case)).and_then(|c| c.first()) {
                    None => "-",
                    Some(Cell::NotApplicable(_)) => "n/a",
                    Some(Cell::Ran(_)) if self.failed(kind, case) => "FAIL",
                    Some(Cell::Ran(_)) => "ok",
                };
                let _ = write!(out, " {cell:>13}");
            }
            out.push('\n');
        }
        for (&(kind, case), cells) in &self.cells {
            for cell in cells {
                if let Cell::Ran(r) = cell {
                    if let Err(why) = &r.outcome {
                        let _ = writeln!(out, "{kind} × {case}: {why}");
                    }
                    for finding in &r.findings {
                        let _ = writeln!(out, "{kind} × {case}: {finding}");
                    }
                }
            }
        }
        let mut took: Vec<_> = self
            .cells
            .iter()
            .flat_map(|(key, cells)| cells.iter().map(move |c| (key, c)))
            .filter_map(|(key, c)| match c {
                Cell::Ran(r) => Some((r.took, key)),
                Cell::NotApplicable(_) => None,
            })
            .collect();
        took.sort_by(|a, b| b.cmp(a));
        for (took, (kind, case)) in took.into_iter().take(8) {
            let _ = writeln!(out, "slow: {kind} × {case} in {took:.1?}");
        }
        let t = self.totals();
        let _ = writeln!(
            out,
            "totals: {} duplicates, {} leaks, {} foreign changes, {} lost secrets, {} status mismatches",
            t.duplicates, t.leaks, t.foreign_changes, t.lost_secrets, t.status_mismatches
        );
        out
    }

    /// What is wrong with the matrix given the (kind, case) pairs expected to fail until
    /// their defect is fixed: a case that fails and is not listed, a listed one that passes,
    /// a listed one that does not exist.
    pub fn verdict(&self, expected_to_fail: &[(&str, Case)]) -> Vec<String> {
        let mut wrong = Vec::new();
        for &(kind, case) in self.cells.keys() {
            let listed = expected_to_fail.contains(&(kind, case));
            let failed = self.failed(kind, case);
            if failed && !listed {
                wrong.push(format!(
                    "{kind} × {case} failed: {}",
                    self.failures(kind, case).join("; ")
                ));
            }
            if listed && !failed {
                wrong.push(format!(
                    "{kind} × {case} passes now: remove it from the list of cases expected to fail"
                ));
            }
        }
        for (kind, case) in expected_to_fail {
            if self.runs_any(kind, *case).is_none() {
                wrong.push(format!(
                    "{kind} × {case} is expected to fail but did not run: remove it from the list"
                ));
            }
        }
        wrong
    }

    /// What went wrong in the runs of (kind, case): each failed step (with what it waited for)
    /// and each broken guarantee the audit found.
    fn failures(&self, kind: &'static str, case: Case) -> Vec<String> {
        let mut why = Vec::new();
        for (repetition, run) in self.runs(kind, case).enumerate() {
            if let Err(step) = &run.outcome {
                why.push(format!("run {repetition}: {step}"));
            }
            why.extend(
                run.findings
                    .iter()
                    .map(|finding| format!("run {repetition}: {finding}")),
            );
            if !run.audit.is_clean() {
                why.push(format!("run {repetition}: audit {:?}", run.audit));
            }
        }
        why
    }

    fn runs_any(&self, kind: &str, case: Case) -> Option<()> {
        self.cells
            .iter()
            .any(|((k, c), cells)| {
                *k == kind && *c == case && cells.iter().any(|c| matches!(c, Cell::Ran(_)))
            })
            .then_some(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ran(outcome: Result<(), String>, findings: Vec<String>) -> Cell {
        Cell::Ran(CaseResult {
            outcome,
            audit: Audit::default(),
            findings,
            took: Duration::from_secs(1),
        })
    }

    #[test]
    fn a_failure_not_expected_says_what_failed_and_an_expected_one_that_passes_is_named() {
        let mut matrix = Matrix::default();
        matrix.record(
            "VPC",
            Case::CrashStorm,
            ran(
                Err("waiting for Ready=True of vpc/conformance: timed out after 120s".into()),
                vec!["created twice".into()],
            ),
        );
        matrix.record("Disk", Case::CrashStorm, ran(Ok(()), vec![]));
        let wrong = matrix.verdict(&[("Disk", Case::CrashStorm)]);
        assert_eq!(wrong.len(), 2, "{wrong:?}");
        assert!(
            wrong.iter().any(|w| w.starts_with("VPC × ")
                && w.contains("failed: run 0: waiting for Ready=True of vpc/conformance")
                && w.contains("run 0: created twice")),
            "{wrong:?}"
        );
        assert!(
            wrong
                .iter()
                .any(|w| w.starts_with("Disk × ") && w.contains("passes now")),
            "{wrong:?}"
        );
    }
}
