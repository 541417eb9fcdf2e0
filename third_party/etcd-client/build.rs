#[cfg(feature = "build-server")]
fn should_build_server() -> bool {
    true
}

#[cfg(not(feature = "build-server"))]
fn should_build_server() -> bool {
    false
}

fn main() {
    let proto_root = "proto";
    println!("cargo:rerun-if-changed={proto_root}");

    // etcdlock's patch (the only change to this file): without PROTOC, use the protoc binary that
    // the protoc-bin-vendored crate carries for the host, so that building needs no system protoc.
    println!("cargo:rerun-if-env-changed=PROTOC");
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()
            .expect("protoc-bin-vendored has no protoc for this host; set PROTOC to a protoc binary");
        std::env::set_var("PROTOC", protoc); // edition 2021: safe; the build script has one thread
    }

    tonic_prost_build::configure()
        .build_server(should_build_server())
        .compile_protos(
            &[
                "proto/etcd/api/authpb/auth.proto",
                "proto/etcd/api/etcdserverpb/rpc.proto",
                "proto/etcd/api/mvccpb/kv.proto",
                "proto/etcd/server/etcdserver/api/v3election/v3electionpb/v3election.proto",
                "proto/etcd/server/etcdserver/api/v3lock/v3lockpb/v3lock.proto",
            ],
            &[proto_root],
        )
        .expect("Failed to compile proto files");
}
