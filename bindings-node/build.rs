fn main() {
    // Linker flags for a Node addon (undefined napi_* symbols resolved by the host process).
    napi_build::setup();
}
