use std::env;
use std::path::PathBuf;

/// The `secp256k1-sys` version whose vendored libsecp256k1 `src/batch_verify.c` compiles
/// against (the one `secp256k1` 0.31 links, as Cargo.lock pins it): its internal functions carry
/// this version's prefix (`rustsecp256k1_v0_11_`).
const SECP256K1_SYS: &str = "secp256k1-sys-0.11.0";

fn main() {
    napi_build::setup();
    let src = secp256k1_sources();
    println!("cargo:rerun-if-changed=src/batch_verify.c");
    println!("cargo:rerun-if-env-changed=MONSOON_SECP256K1_SRC");
    cc::Build::new()
        .file("src/batch_verify.c")
        .include(&src)
        .include(src.join("include"))
        .include(src.join("src"))
        // The settings secp256k1-sys builds the library with (its build.rs), so the arithmetic is
        // the same code; unused internals of the headers are expected.
        .define("SECP256K1_API", Some(""))
        .define("ECMULT_WINDOW_SIZE", Some("15"))
        .define("ECMULT_GEN_PREC_BITS", Some("4"))
        .define("USE_EXTERNAL_DEFAULT_CALLBACKS", Some("1"))
        .opt_level(3)
        .flag_if_supported("-Wno-unused-function")
        .flag_if_supported("-Wno-unused-parameter")
        .warnings_into_errors(true)
        .compile("monsoon_batch_verify");
}

/// libsecp256k1 as secp256k1-sys vendors it: MONSOON_SECP256K1_SRC, else the crate's unpacked
/// source in Cargo's registry (Cargo downloads every dependency before it runs build scripts).
fn secp256k1_sources() -> PathBuf {
    if let Ok(dir) = env::var("MONSOON_SECP256K1_SRC") {
        return PathBuf::from(dir);
    }
    let home = env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env::var("HOME").expect("HOME or CARGO_HOME")).join(".cargo"));
    let registry = home.join("registry").join("src");
    let found = std::fs::read_dir(&registry).ok().and_then(|dirs| {
        dirs.flatten()
            .map(|d| d.path().join(SECP256K1_SYS).join("depend").join("secp256k1"))
            .find(|p| p.join("src").join("ecmult_impl.h").exists())
    });
    found.unwrap_or_else(|| {
        panic!(
            "{SECP256K1_SYS}'s libsecp256k1 sources were not found under {}: set MONSOON_SECP256K1_SRC to its depend/secp256k1",
            registry.display()
        )
    })
}
