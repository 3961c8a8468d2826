//! `google.rpc.Status`, generated from `google/rpc/status.proto`: the rich status a failed
//! call may carry in its `grpc-status-details-bin` trailer. Nothing hand-written lives here.

include!(concat!(env!("OUT_DIR"), "/messages/google.rpc.rs"));
