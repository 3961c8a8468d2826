//! Fuzzing of the walk against prost: on every input, prost reading a message
//! means the walk reads it too (with the same config depth), and `decode`
//! never panics and refuses under the id the bytes start with. Seeded with
//! envelopes of every kind, mutated; bounded in time (see
//! `azd_wasm_host_fuzz::Campaign`); replays the kept regression inputs first.

use azd_wasm_host_fuzz::envelopes::Envelopes;
use azd_wasm_host_fuzz::{Campaign, Tally, regressions};
use azd_wasm_host_proto::azdext as pb;
use bytes::Bytes;
use prost::Message as _;
use prost_types::value::Kind;

use super::{Unreadable, decode};

/// Config levels of a decoded value, counted as the walk counts them.
fn value_depth(v: &prost_types::Value) -> usize {
    match &v.kind {
        Some(Kind::StructValue(s)) => struct_depth(s),
        Some(Kind::ListValue(l)) => 1 + l.values.iter().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn struct_depth(s: &prost_types::Struct) -> usize {
    1 + s.fields.values().map(value_depth).max().unwrap_or(0)
}

fn config_depth(msg: &pb::ProvisioningMessage) -> usize {
    match &msg.message_type {
        Some(pb::provisioning_message::MessageType::InitializeRequest(r)) => r
            .options
            .as_ref()
            .and_then(|o| o.config.as_ref())
            .map_or(0, struct_depth),
        _ => 0,
    }
}

/// Checks one input; `id` is the request id its first bytes hold, if any;
/// `shallow` says it nests no deeper than prost can recurse on this thread
/// (else prost is run on it only if the walk finds it shallow).
fn check(bytes: &[u8], id: Option<&str>, shallow: bool, tally: &mut Tally) {
    let walked = super::envelope_shape(bytes);
    let prost_safe = shallow
        || walked
            .as_ref()
            .is_ok_and(|s| s.nesting <= super::MAX_NESTING);
    let read = prost_safe.then(|| pb::ProvisioningMessage::decode(bytes));
    match (&walked, &read) {
        (Err(m), Some(Ok(_))) => {
            return tally.fail(bytes, format!("the walk refused what prost reads: {m:?}"));
        }
        // The walk also counts what prost decodes and then drops (a later
        // oneof member or map entry replaces it): never less.
        (Ok(shape), Some(Ok(msg))) if shape.config_depth < config_depth(msg) => {
            return tally.fail(
                bytes,
                format!(
                    "config depth {} walked, {} decoded",
                    shape.config_depth,
                    config_depth(msg)
                ),
            );
        }
        _ => {}
    }
    let decoded = std::panic::catch_unwind(|| decode(&Bytes::copy_from_slice(bytes)));
    match decoded {
        Err(_) => tally.fail(bytes, "decode panicked"),
        Ok(Ok(_)) => tally.record("read", ""),
        Ok(Err(Unreadable::Refused { request_id, error })) => {
            if id.is_some_and(|id| id != request_id) {
                return tally.fail(bytes, format!("refused under {request_id:?}, not {id:?}"));
            }
            let code = error.code().unwrap_or_default();
            if code != "invalid_message" && code != "config_too_deep" {
                return tally.fail(bytes, format!("refused with {code:?}"));
            }
            tally.record("refused", &error.message);
        }
        Ok(Err(Unreadable::Anonymous(why))) => {
            if id.is_some() {
                return tally.fail(
                    bytes,
                    format!("no id read, though the bytes start with one: {why}"),
                );
            }
            tally.record("anonymous", &why);
        }
    }
}

#[test]
fn fuzz_the_walk_agrees_with_prost_and_decode_never_panics() {
    // prost recurses on what the walk lets through: a stack like the host's.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let campaign = Campaign::new("inbound-walk", 8);
            let mut tally = campaign.tally();
            let dir = azd_wasm_host_fuzz::stream::inbound_regressions();
            let kept = regressions(&dir);
            assert!(
                !kept.is_empty(),
                "no regression inputs in {}",
                dir.display()
            );
            for (_, bytes) in &kept {
                check(bytes, None, false, &mut tally);
            }
            let mut envelopes = Envelopes::new(campaign.rng(0));
            while campaign.running() {
                let sample = envelopes.sample("fuzz-id", "p");
                // Groups 4,000 or more deep: prost's skip would recurse that deep.
                let shallow = sample.group_depth < 1000;
                check(&sample.bytes, Some("fuzz-id"), shallow, &mut tally);
            }
            campaign.finish([tally]);
        })
        .unwrap()
        .join()
        .unwrap();
}
