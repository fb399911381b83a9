use super::*;

fn v(major: u32, minor: u32, patch: u32) -> Version {
    Version::new(major, minor, patch)
}

const PATH_TO_3_6: &str =
    "upgrade to 3.5.26 or later first, wait for every member to be healthy, then to 3.6";

fn member(name: &str, version: Option<Version>, healthy_voter: bool) -> MemberReport {
    MemberReport {
        name: name.to_owned(),
        version,
        healthy_voter,
    }
}

fn trio(versions: [Version; 3]) -> Vec<MemberReport> {
    versions
        .iter()
        .enumerate()
        .map(|(i, &version)| member(&format!("etcd-{i}"), Some(version), true))
        .collect()
}

#[test]
fn the_floor_to_leave_3_5_is_3_5_26() {
    let floor = patch_floor((3, 5)).expect("3.5 has a floor");
    assert_eq!(floor.fixed_in, v(3, 5, 26));
    assert!(floor.hazard.contains("zombies"), "{}", floor.hazard);
    assert_eq!(patch_floor((3, 4)), None);
    assert_eq!(patch_floor((3, 6)), None);
}

#[test]
fn upgrades_go_one_minor_at_a_time() {
    assert!(check_change(v(3, 4, 23), v(3, 4, 30)).is_ok());
    assert!(
        check_change(v(3, 4, 30), v(3, 4, 23)).is_ok(),
        "patch downgrades are fine"
    );
    assert!(check_change(v(3, 4, 23), v(3, 5, 0)).is_ok());
    assert!(check_change(v(3, 5, 17), v(3, 5, 17)).is_ok());
    let skip = check_change(v(3, 4, 23), v(3, 6, 0))
        .expect_err("skips 3.5")
        .to_string();
    assert!(
        skip.contains("from 3.4.23") && skip.contains("to 3.6.0") && skip.contains(PATH_TO_3_6),
        "through 3.5's floor: {skip}"
    );
    assert!(
        check_change(v(3, 5, 0), v(3, 4, 0)).is_err(),
        "minor downgrade"
    );
    assert!(
        check_change(v(3, 5, 0), v(4, 0, 0)).is_err(),
        "major change"
    );
    assert!(
        check_change(v(3, 6, 0), v(3, 5, 26)).is_err(),
        "a minor downgrade needs etcd's downgrade API"
    );
    assert!(
        check_change(v(3, 6, 4), v(3, 6, 1)).is_ok(),
        "patch downgrade"
    );
}

#[test]
fn three_five_leaves_for_three_six_only_from_3_5_26() {
    for from in [v(3, 5, 17), v(3, 5, 20), v(3, 5, 24), v(3, 5, 25)] {
        let err = check_change(from, v(3, 6, 16)).expect_err("below the floor");
        assert!(
            matches!(err, SpecError::UnsupportedUpgrade { .. }),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains(PATH_TO_3_6), "the path: {message}");
        assert!(
            message.contains(&format!("from {from} ")) && message.contains("to 3.6.16"),
            "{message}"
        );
        assert!(message.contains("zombies"), "says why: {message}");
    }
    for from in [v(3, 5, 17), v(3, 5, 25)] {
        assert!(
            check_change(from, v(3, 5, 26)).is_ok(),
            "the step to the floor itself"
        );
        assert!(check_change(from, v(3, 5, 35)).is_ok(), "or past it");
    }
    assert!(check_change(v(3, 5, 26), v(3, 6, 0)).is_ok());
    assert!(check_change(v(3, 5, 35), v(3, 6, 16)).is_ok());
    let skip = check_change(v(3, 5, 17), v(3, 7, 0))
        .expect_err("skips 3.6")
        .to_string();
    assert!(skip.contains(PATH_TO_3_6), "first the patch: {skip}");
    let skip = check_change(v(3, 5, 26), v(3, 7, 0))
        .expect_err("skips 3.6")
        .to_string();
    assert!(
        skip.contains("upgrade to 3.6.0 or later first") && skip.contains("then to 3.7"),
        "{skip}"
    );
}

#[test]
fn every_rule_names_its_source() {
    for floor in PATCH_FLOORS {
        assert!(
            floor.hazard.contains("etcd issue") || floor.hazard.contains("etcd blog"),
            "{floor:?}"
        );
    }
}

#[test]
fn a_rollout_within_a_minor_version_never_waits() {
    let members = [member("etcd-0", None, false)];
    assert_eq!(
        check_rollout_start(Some(v(3, 5, 17)), Some(&members), v(3, 5, 35)),
        Ok(())
    );
    assert_eq!(
        check_rollout_start(Some(v(3, 5, 17)), None, v(3, 5, 35)),
        Ok(())
    );
}

#[test]
fn three_six_starts_once_every_member_is_healthy_on_the_floor() {
    let ready = trio([v(3, 5, 35), v(3, 5, 35), v(3, 5, 26)]);
    assert_eq!(
        check_rollout_start(Some(v(3, 5, 35)), Some(&ready), v(3, 6, 16)),
        Ok(())
    );
}

// The spec moved on to 3.5.35 and the StatefulSet was rendered with it, but the rollout has not
// reached etcd-0 yet: the next move to 3.6 waits, naming it.
#[test]
fn three_six_waits_while_a_member_still_runs_the_older_patch() {
    let rolling = trio([v(3, 5, 17), v(3, 5, 35), v(3, 5, 35)]);
    let wait = check_rollout_start(Some(v(3, 5, 35)), Some(&rolling), v(3, 6, 16))
        .expect_err("etcd-0 still runs 3.5.17");
    assert_eq!(wait.waiting, vec!["etcd-0 runs 3.5.17".to_owned()]);
    let message = wait.to_string();
    assert!(
        message.contains("3.6.16") && message.contains("on 3.5.26 or later"),
        "{message}"
    );
}

#[test]
fn three_six_waits_for_a_member_that_does_not_answer_or_is_not_a_healthy_voter() {
    let members = vec![
        member("etcd-0", None, false),
        member("etcd-1", Some(v(3, 5, 35)), false),
        member("etcd-2", Some(v(3, 5, 35)), true),
    ];
    let wait = check_rollout_start(Some(v(3, 5, 35)), Some(&members), v(3, 6, 16))
        .expect_err("two members are not ready");
    assert_eq!(
        wait.waiting,
        vec![
            "etcd-0 does not answer".to_owned(),
            "etcd-1 is not a healthy voter".to_owned()
        ]
    );
    let unknown = check_rollout_start(Some(v(3, 5, 35)), None, v(3, 6, 16))
        .expect_err("etcd does not answer");
    assert_eq!(unknown.waiting, vec!["etcd does not answer".to_owned()]);
    let empty = check_rollout_start(Some(v(3, 5, 35)), Some(&[]), v(3, 6, 16))
        .expect_err("no members listed");
    assert_eq!(empty.waiting, vec!["etcd lists no members".to_owned()]);
}

// Once the StatefulSet carries 3.6, the rollout is under way: the members it restarts (not
// answering for a moment) do not stop it.
#[test]
fn a_rollout_under_way_is_not_held_by_the_members_it_restarts() {
    let restarting = vec![
        member("etcd-0", Some(v(3, 5, 35)), true),
        member("etcd-1", None, false),
        member("etcd-2", Some(v(3, 6, 16)), true),
    ];
    assert_eq!(
        check_rollout_start(Some(v(3, 6, 16)), Some(&restarting), v(3, 6, 16)),
        Ok(())
    );
}
