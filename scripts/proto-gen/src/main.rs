//! `etcdlock-proto-gen OUT_DIR`: writes the Rust code of etcd's protos (the five packages
//! etcd-client includes, client side only) to OUT_DIR, as etcd-client's own build script did at
//! every build. Run from the repository root; scripts/check-proto-gen.sh compares the result
//! with third_party/etcd-client/src/rpc/generated/.
use std::path::PathBuf;

const PROTO_ROOT: &str = "third_party/etcd-client/proto";
const PROTOS: [&str; 5] = [
    "etcd/api/authpb/auth.proto",
    "etcd/api/etcdserverpb/rpc.proto",
    "etcd/api/mvccpb/kv.proto",
    "etcd/server/etcdserver/api/v3election/v3electionpb/v3election.proto",
    "etcd/server/etcdserver/api/v3lock/v3lockpb/v3lock.proto",
];

fn main() {
    let out = PathBuf::from(std::env::args_os().nth(1).expect("usage: etcdlock-proto-gen OUT_DIR"));
    std::fs::create_dir_all(&out).expect("cannot create OUT_DIR");
    // A PROTOC set by the caller wins; otherwise the vendored one, so nothing needs installing.
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path().expect("protoc-bin-vendored has no protoc for this host");
        std::env::set_var("PROTOC", protoc); // one thread: edition 2021's set_var is sound here
    }
    let protos: Vec<PathBuf> = PROTOS.iter().map(|p| PathBuf::from(PROTO_ROOT).join(p)).collect();
    tonic_prost_build::configure()
        .build_server(false)
        .out_dir(&out)
        .compile_protos(&protos, &[PathBuf::from(PROTO_ROOT)])
        .expect("tonic-prost-build failed on etcd's protos");
}
