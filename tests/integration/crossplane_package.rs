//! The Crossplane provider package: `crossplane xpkg build` (the pinned CLI, built by testenv)
//! builds `package/` offline (no runtime image is embedded, so nothing is pulled), and the
//! package it writes holds the Provider meta of `package/crossplane.yaml` and every CRD the API
//! types generate. An `.xpkg` is an OCI image tarball; its layer holds `package.yaml`, the
//! stream of those objects. `tar` unpacks it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

fn package_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("package")
}

fn untar(archive: &Path, into: &Path, gzip: bool) {
    std::fs::create_dir_all(into).expect("a directory to unpack into");
    let flags = if gzip { "-xzf" } else { "-xf" };
    let out = std::process::Command::new("tar")
        .arg(flags)
        .arg(archive)
        .arg("-C")
        .arg(into)
        .stdin(Stdio::null())
        .output()
        .expect("tar runs");
    assert!(
        out.status.success(),
        "tar {flags} {}: {}",
        archive.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The objects of `package.yaml` in the package's layers.
fn package_objects(xpkg: &Path, work: &Path) -> Vec<Value> {
    let image = work.join("image");
    untar(xpkg, &image, false);
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(image.join("manifest.json")).expect("the image tarball's manifest.json"),
    )
    .expect("manifest.json is JSON");
    let mut objects = Vec::new();
    let layers = manifest[0]["Layers"]
        .as_array()
        .expect("the image's layers");
    for (i, layer) in layers.iter().enumerate() {
        let into = work.join(format!("layer-{i}"));
        let file = layer.as_str().expect("a layer file");
        untar(&image.join(file), &into, file.ends_with(".gz"));
        let package = into.join("package.yaml");
        if package.is_file() {
            let text = std::fs::read_to_string(&package).expect("package.yaml");
            let documents: Vec<Value> =
                serde_saphyr::from_multiple(&text).expect("package.yaml is YAML");
            objects.extend(documents.into_iter().filter(Value::is_object));
        }
    }
    objects
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xpkg_build_packages_the_provider_meta_and_every_crd() {
    let cli = tokio::task::spawn_blocking(|| {
        ferroplane_testenv::Builder::new(None).ensure_crossplane_cli()
    })
    .await
    .expect("the build did not panic")
    .unwrap_or_else(|e| panic!("the pinned crossplane CLI (testenv/versions.yaml): {e}"));
    let work = tempfile::tempdir().expect("temp dir");
    let xpkg = work.path().join("ferroplane.xpkg");
    let out = tokio::process::Command::new(&cli)
        .args(["xpkg", "build", "--package-root"])
        .arg(package_dir())
        .arg("--package-file")
        .arg(&xpkg)
        // No examples directory: the default `./examples` of the working directory is absent.
        .current_dir(work.path())
        .env("HOME", work.path())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("the crossplane CLI runs");
    assert!(
        out.status.success(),
        "crossplane xpkg build: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let objects = package_objects(&xpkg, work.path());
    let metas: Vec<&Value> = objects
        .iter()
        .filter(|o| o["apiVersion"] == "meta.pkg.crossplane.io/v1")
        .collect();
    assert_eq!(metas.len(), 1, "one meta object: {metas:?}");
    let source: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(package_dir().join("crossplane.yaml")).expect("crossplane.yaml"),
    )
    .expect("crossplane.yaml is YAML");
    assert_eq!(metas[0]["kind"], "Provider");
    assert_eq!(
        metas[0]["spec"], source["spec"],
        "the meta is package/crossplane.yaml's"
    );

    let packaged: BTreeSet<String> = objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let generated: BTreeSet<String> = ferroplane_apis::crds()
        .into_iter()
        .map(|crd| crd.metadata.name.unwrap_or_default())
        .collect();
    assert_eq!(packaged, generated, "every CRD, and nothing else");
    assert_eq!(
        objects.len(),
        generated.len() + 1,
        "the meta and the CRDs only"
    );
}
