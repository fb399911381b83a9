//! Replacing a member's directory of files (certificates, configuration) all at once, so that a
//! running etcd never reads half of an old set and half of a new one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

/// Makes `dir` hold exactly `files`, all at once; nothing happens when it already does.
pub(super) fn swap_in(dir: &Path, files: &BTreeMap<String, Vec<u8>>) -> Result<()> {
    let same = std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.count() == files.len()
            && files
                .iter()
                .all(|(k, v)| std::fs::read(dir.join(k)).is_ok_and(|old| old == *v))
    });
    if same || !dir.exists() {
        return Ok(());
    }
    let staged = dir.with_extension("refresh");
    let _ = std::fs::remove_dir_all(&staged);
    std::fs::create_dir_all(&staged)
        .map_err(Error::io(format!("creating {}", staged.display())))?;
    for (key, content) in files {
        std::fs::write(staged.join(key), content)
            .map_err(Error::io(format!("writing {}", staged.join(key).display())))?;
    }
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap_or_default();
    let (from, to) = (c(&staged), c(dir));
    // SAFETY: two NUL-terminated paths that live across the call.
    let exchanged = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if exchanged != 0 {
        return Err(Error::io(format!("swapping in {}", dir.display()))(
            std::io::Error::last_os_error(),
        ));
    }
    let _ = std::fs::remove_dir_all(&staged);
    Ok(())
}
