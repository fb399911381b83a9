//! Tests of `gateway`.

use super::*;

#[test]
fn decodes_a_member_list_with_learner_and_unstarted_member() {
    let value = json!({
        "header": {"cluster_id": "1", "member_id": "2", "raft_term": "2"},
        "members": [
            {"ID": "13668033151171901709", "name": "m0", "peerURLs": ["http://a:2380"], "clientURLs": ["http://a:2379"]},
            {"ID": "14315252655391523457", "peerURLs": ["http://b:2380"], "isLearner": true}
        ]
    });
    let members: Vec<Member> = decode::<MemberList>("member list", value)
        .expect("decodes")
        .members
        .into_iter()
        .map(Member::from)
        .collect();
    assert_eq!(members[0].id, 13_668_033_151_171_901_709);
    assert!(members[0].started() && !members[0].is_learner);
    assert!(!members[1].started() && members[1].is_learner);
}

#[test]
fn decodes_status() {
    let value = json!({
        "header": {"cluster_id": "1", "member_id": "42", "revision": "1", "raft_term": "2"},
        "version": "3.4.23", "dbSize": "20480", "leader": "42", "raftIndex": "4", "raftTerm": "2"
    });
    let s: WireStatus = decode("status", value).expect("decodes");
    assert_eq!((s.header.member_id, s.leader, s.raft_index), (42, 42, 4));
    assert!(!s.is_learner);
}

#[test]
fn rejects_ids_that_are_not_numbers() {
    let value = json!({"members": [{"ID": "abc"}]});
    assert!(decode::<MemberList>("member list", value).is_err());
}
