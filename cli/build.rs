//! The git commit for `etcdlock --version`, as ETCDLOCK_GIT_COMMIT at compile time: the
//! variable of that name if set (a packager building from a tarball may give it), else `git
//! rev-parse --short HEAD` of the checkout this workspace is the top of, else "unknown" (no git,
//! or a source tarball without .git: it still builds). Rebuilt when HEAD moves.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ETCDLOCK_GIT_COMMIT");
    let given = std::env::var("ETCDLOCK_GIT_COMMIT").ok().filter(|c| !c.trim().is_empty());
    let commit = given.or_else(from_git).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=ETCDLOCK_GIT_COMMIT={}", commit.trim());
}

fn from_git() -> Option<String> {
    let workspace = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?).join("..");
    // Only this project's own repository: a tarball unpacked inside another checkout must not
    // take that checkout's commit.
    let top = git(&workspace, &["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != workspace.canonicalize().ok()? {
        return None;
    }
    let commit = git(&workspace, &["rev-parse", "--short", "HEAD"])?;
    // What moves HEAD: HEAD itself (a checkout), the branch it names (a commit), packed refs.
    let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watch.extend(git(&workspace, &["symbolic-ref", "-q", "HEAD"]));
    for name in watch {
        if let Some(path) = git(&workspace, &["rev-parse", "--path-format=absolute", "--git-path", &name]) {
            // Only files that exist: a missing one would rerun this script on every build.
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    Some(commit)
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(dir).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}
