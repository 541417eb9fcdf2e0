//! Generates include/etcdlock.h (repo root) from this crate's exports with cbindgen.
//!
//! The header is committed. By default a stale header fails the build, so CI can never ship a
//! library that differs from its header; `ETCDLOCK_UPDATE_HEADER=1 cargo build -p etcdlock-c`
//! rewrites it after an API change.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let header = crate_dir.join("../include/etcdlock.h");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=../include/etcdlock.h");
    println!("cargo:rerun-if-env-changed=ETCDLOCK_UPDATE_HEADER");

    // The shared library's SONAME (install name on macOS): libetcdlock.so.ABI, which install.sh
    // installs as libetcdlock.so.VERSION with the .so.ABI and .so links. ABI is the major
    // version from 1.0 on, and MAJOR.MINOR (0.1, 0.2, ...) before: under semver every 0.x minor
    // release may break the ABI, so a program built against 0.1 must not load a 0.2 library
    // that a shared libetcdlock.so.0 would let the loader pick.
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap();
    let abi = if major == "0" { format!("{major}.{minor}") } else { major };
    match std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default().as_str() {
        "macos" | "ios" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libetcdlock.{abi}.dylib")
        }
        "windows" => {}
        _ => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libetcdlock.so.{abi}");
            // Programs linked against the build output (-L target/release, the demo's and the
            // benchmarks' C programs) need the library under its SONAME at run time: a
            // libetcdlock.so.ABI -> libetcdlock.so link next to it (OUT_DIR is
            // <profile dir>/build/<pkg>-<hash>/out; the link dangles until the library is linked).
            let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
            if let Some(profile_dir) = out.ancestors().nth(3) {
                let link = profile_dir.join(format!("libetcdlock.so.{abi}"));
                if std::fs::read_link(&link).ok().as_deref() != Some(std::path::Path::new("libetcdlock.so")) {
                    let _ = std::fs::remove_file(&link);
                    #[cfg(unix)]
                    let _ = std::os::unix::fs::symlink("libetcdlock.so", &link);
                }
            }
        }
    }

    let fresh = generate(&crate_dir);
    // Always kept next to the build output: test.sh diffs the committed header against it.
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("etcdlock.h");
    std::fs::write(&out, &fresh).unwrap();
    let committed = std::fs::read_to_string(&header).unwrap_or_default();
    if fresh == committed {
        return;
    }
    if std::env::var("ETCDLOCK_UPDATE_HEADER").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(header.parent().unwrap()).unwrap();
        std::fs::write(&header, fresh).unwrap();
        println!("cargo:warning=updated include/etcdlock.h");
        return;
    }
    panic!(
        "include/etcdlock.h differs from the header generated from bindings-c/src \
         (fresh copy: {}). Run `ETCDLOCK_UPDATE_HEADER=1 cargo build -p etcdlock-c` and commit it.",
        out.display()
    );
}

/// The header text, with version macros from the Cargo version (never hand-edited).
fn generate(crate_dir: &std::path::Path) -> String {
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let v = |k: &str| std::env::var(k).unwrap();
    let (major, minor, patch) = (v("CARGO_PKG_VERSION_MAJOR"), v("CARGO_PKG_VERSION_MINOR"), v("CARGO_PKG_VERSION_PATCH"));
    let own = config.after_includes.take().unwrap_or_default();
    config.after_includes = Some(format!(
        "\n#define ETCDLOCK_VERSION_MAJOR {major}\n#define ETCDLOCK_VERSION_MINOR {minor}\n#define ETCDLOCK_VERSION_PATCH {patch}\n\
         #define ETCDLOCK_VERSION \"{}\"\n\
         /** Major * 10000 + minor * 100 + patch, for #if comparisons. */\n\
         #define ETCDLOCK_VERSION_NUMBER ({major} * 10000 + {minor} * 100 + {patch})\n\n\
         /** Wait without a time limit (for every `timeout_ms` argument). */\n\
         #define ETCDLOCK_WAIT_FOREVER ((int64_t)-1)\n{own}",
        v("CARGO_PKG_VERSION")
    ));
    let mut buf = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen could not generate the header")
        .write(&mut buf);
    String::from_utf8(buf).unwrap()
}
