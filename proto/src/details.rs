//! The typed details of a failed call's status, under either contract's type URLs.
//!
//! azd attaches what it knows of a failure to the call's status (`grpc-status-details-bin`, a
//! `google.rpc.Status`): an `ActionableErrorDetail` (a suggestion and links, for errors of its
//! own) and a `ServiceErrorDetail` (an Azure service's error). Their type URLs name them under
//! the contract of the call ([`Contract::type_url`]): `azdext.` from every azd released so far
//! and through the versioned contract's bridge, `azd.extensions.v1.` otherwise. Both are read;
//! anything else (other types, bytes that do not decode, nesting past the limit) is skipped,
//! since details only add to a status's message.

use prost::{Message, Name};

use crate::azdext as pb;
use crate::contract::Contract;
use crate::rpc;

/// What azd attached to a failed call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    /// A suggestion and links for the user.
    pub actionable: Option<pb::ActionableErrorDetail>,
    /// The Azure service's error behind the failure.
    pub service: Option<pb::ServiceErrorDetail>,
}

/// Reads the details of `status_details` (the bytes of a `google.rpc.Status`).
pub fn read(status_details: &[u8]) -> Details {
    let mut details = Details::default();
    if status_details.is_empty() {
        return details;
    }
    let Ok(status) = crate::wire::decode::<rpc::Status>(status_details) else {
        return details;
    };
    for any in &status.details {
        match Contract::of_type_url(&any.type_url) {
            Some((_, name)) if name == pb::ActionableErrorDetail::NAME => {
                if let Ok(d) = crate::wire::decode(&any.value) {
                    details.actionable.get_or_insert(d);
                }
            }
            Some((_, name)) if name == pb::ServiceErrorDetail::NAME => {
                if let Ok(d) = crate::wire::decode(&any.value) {
                    details.service.get_or_insert(d);
                }
            }
            _ => {}
        }
    }
    details
}

/// The bytes of a `google.rpc.Status` with `code`, `message` and `detail` typed under
/// `contract`, as azd writes them (the simulated azd sends these).
pub fn encode<D: Message + Name>(
    contract: Contract,
    code: i32,
    message: &str,
    detail: &D,
) -> Vec<u8> {
    rpc::Status {
        code,
        message: message.to_owned(),
        details: vec![prost_types::Any {
            type_url: contract.type_url(D::NAME),
            value: detail.encode_to_vec(),
        }],
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actionable() -> pb::ActionableErrorDetail {
        pb::ActionableErrorDetail {
            suggestion: "Run `azd auth login`.".into(),
            links: vec![pb::ErrorLink {
                url: "https://aka.ms/azd".into(),
                title: "docs".into(),
            }],
        }
    }

    #[test]
    fn details_are_read_under_either_contract() {
        for contract in Contract::NEWEST_FIRST {
            let bytes = encode(contract, 9, "no", &actionable());
            assert_eq!(read(&bytes).actionable, Some(actionable()), "{contract}");
        }
        let service = pb::ServiceErrorDetail {
            error_code: "Conflict".into(),
            status_code: 409,
            service_name: "management.azure.com".into(),
        };
        let bytes = encode(Contract::V1, 2, "conflict", &service);
        assert_eq!(read(&bytes).service, Some(service));
    }

    #[test]
    fn other_types_and_broken_bytes_are_skipped() {
        let mut status = rpc::Status {
            code: 2,
            message: "x".into(),
            details: vec![
                prost_types::Any {
                    type_url: "type.googleapis.com/google.rpc.ErrorInfo".into(),
                    value: actionable().encode_to_vec(),
                },
                prost_types::Any {
                    type_url: Contract::V1.type_url("ActionableErrorDetail"),
                    value: vec![0xff, 0xff, 0xff],
                },
            ],
        };
        assert_eq!(read(&status.encode_to_vec()), Details::default());
        // Groups nested far past the limit inside a detail: skipped, not recursed into.
        let mut deep = vec![(15 << 3) | 3; 1_000_000];
        deep.extend(std::iter::repeat_n((15 << 3) | 4, 1_000_000));
        status.details[1].value = deep;
        assert_eq!(read(&status.encode_to_vec()), Details::default());
        assert_eq!(read(b"\xff\xff"), Details::default());
        assert_eq!(read(b""), Details::default());
    }
}
