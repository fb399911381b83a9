//! Where the manifests go: stdout as one multi-document YAML stream, or a directory with one
//! file per kind (`vpc.yaml`, `vswitch.yaml`, `securitygroup.yaml`, `keypair.yaml`,
//! `ecsinstance.yaml`, `disk.yaml`), which `kubectl apply -f DIR` takes whole. Files per kind,
//! not per object: 10,000 instances stay one file, and the kinds' order is the order of their
//! references.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;

use super::manifest::Manifest;

fn yaml(manifest: &Manifest) -> anyhow::Result<String> {
    serde_saphyr::to_string(&manifest.object)
        .with_context(|| format!("cannot write {} {} as YAML", manifest.kind, manifest.name))
}

/// Writes every manifest to `out`, `---` between them.
pub fn write_stream(manifests: &[Manifest], out: &mut impl Write) -> anyhow::Result<()> {
    for m in manifests {
        writeln!(out, "---")?;
        out.write_all(yaml(m)?.as_bytes())?;
    }
    Ok(())
}

/// Writes one file per kind into `dir` (created when missing); returns the files written.
pub fn write_dir(manifests: &[Manifest], dir: &Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut kinds: Vec<&str> = Vec::new();
    for m in manifests {
        if !kinds.contains(&m.kind) {
            kinds.push(m.kind);
        }
    }
    let mut written = Vec::new();
    for kind in kinds {
        let file = format!("{}.yaml", kind.to_ascii_lowercase());
        let path = dir.join(&file);
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&path)
                .with_context(|| format!("cannot write {}", path.display()))?,
        );
        let of_kind: Vec<Manifest> = manifests
            .iter()
            .filter(|m| m.kind == kind)
            .cloned()
            .collect();
        write_stream(&of_kind, &mut out)?;
        out.flush()?;
        written.push(file);
    }
    Ok(written)
}
