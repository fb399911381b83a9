//! End-to-end tests of the ferroplane binary and library, in one binary, against two API
//! servers: every test body of the modules below runs once on the sandbox (`sandbox::...`) and
//! once on the real Kubernetes control plane that `ferroplane-testenv` builds and starts
//! (`real_control_plane::...`: kube-apiserver, kube-controller-manager with the real
//! StatefulSet, Deployment and garbage-collector controllers, kube-scheduler, etcd and kwok's
//! fake nodes). There the controllers run as ferroplane's ServiceAccount with deploy/'s RBAC, so
//! a missing permission fails a test. Test filters: `sandbox::`, `real_control_plane::`, or a
//! module name such as `reliability`.
//!
//! Only on the sandbox: `rbac`, which edits the ferroplane-alibaba ClusterRole that every test of
//! the shared real control plane relies on, and `e2e_etcd_restore`, which writes the status of
//! restore Jobs that the real Job controller owns there (its real counterpart runs the Jobs, in
//! `etcd_members`), and `e2e_etcd_quorum`, which destroys member volumes by taking the
//! pvc-protection finalizer off claims the members' running pods hold. Only on the real control plane: `etcd_members` and `etcd_members_recovery`,
//! EtcdCluster with real etcd members behind the real StatefulSet controller (the sandbox runs
//! nothing in its pods), and `application_rollout`, a rollout the real scheduler and Deployment controller
//! leave stuck past its progress deadline, and `crossplane_composition`, real Crossplane core
//! composing ferroplane's kinds.

mod support;

mod application_rollout;
mod bad_input;
mod crossplane_composition;
mod crossplane_package;
mod e2e_crossplane;
mod e2e_disks;
mod e2e_ecs;
mod e2e_ecs_field_table;
mod e2e_ecs_fields;
mod e2e_etcd_backup;
mod e2e_etcd_quorum;
mod e2e_etcd_restore;
mod e2e_fleet;
mod e2e_import;
mod e2e_in_cluster;
mod e2e_network;
mod e2e_plan;
mod e2e_plan_fleet;
mod e2e_plan_network;
mod etcd_ca_recovery;
mod etcd_members;
mod etcd_members_recovery;
mod etcd_user_tls;
mod helm_chart;
mod helm_install;
mod rbac;
mod reliability;
mod reliability_network;

/// Declares, per module, a test for each listed body, run on `$server`.
macro_rules! tests_on {
    ($server:expr; $($module:ident { $($test:ident),* $(,)? })*) => {
        $(
            mod $module {
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $test() {
                        crate::support::on($server, crate::$module::$test()).await
                    }
                )*
            }
        )*
    };
}

/// Each test with an API server of its own (`ferroplane::environment`).
mod sandbox {
    tests_on! { crate::support::Server::Sandbox;
        bad_input { schema_mistakes_are_refused_at_apply_time, runtime_mistakes_end_in_an_actionable_condition }
        e2e_ecs { create_get_edit_stop_and_delete, instance_type_change_waits_for_allow_restart, orphan_keeps_the_instance_and_observe_only_imports_it, failures_are_reported_and_secret_rotation_recovers }
        e2e_in_cluster { application_sample_ready_scaled_reverted_and_deleted, application_with_autoscaling_secret_env_and_two_ports, application_spec_mistakes_are_refused_at_apply_time, etcdcluster_sample_ready_reverted_refused_and_deleted, same_named_objects_are_never_adopted, etcdcluster_scaled_three_to_one_to_three_gets_new_claims, etcdcluster_operations_fields_reach_the_pods, etcdcluster_with_generated_tls, etcdcluster_with_root_auth }
        e2e_network { the_stack_sample_is_applied_and_deleted_in_one_command }
        e2e_crossplane { crossplane_annotations_and_users_through_kubectl }
        e2e_fleet { a_fleet_places_rolls_and_scales, a_rollout_that_makes_no_progress_stops_at_its_deadline, a_fleet_moves_back_to_a_zone_with_stock_again }
        e2e_ecs_fields { in_place_edits_apply_and_immutable_edits_are_refused }
        e2e_ecs_field_table { every_field_class_is_applied_or_refused }
        e2e_disks { a_disk_and_a_key_pair_through_their_whole_life }
        e2e_import { an_imported_account_is_adopted_without_a_change }
        e2e_plan { plan_predicts_exactly_what_the_controller_does }
        e2e_plan_fleet { plan_predicts_the_members_a_fleet_creates }
        e2e_plan_network { plan_predicts_the_network_kinds_and_a_disk }
        e2e_etcd_backup { etcdbackup_to_oss_keeps_n_follows_a_schedule_and_deletes }
        reliability { throttling_and_server_errors_neither_duplicate_nor_leak, sigkill_during_create_and_delete_storms_converges }
        reliability_network { a_network_stack_under_faults_neither_duplicates_nor_leaks }
        rbac { a_verb_missing_from_deploy_shows_as_a_condition }
        e2e_etcd_restore { a_restore_waits_for_its_jobs_and_reports_a_failed_one }
        e2e_etcd_quorum { a_lost_quorum_is_reported_and_manual_recovery_waits, from_latest_backup_replaces_every_members_data_and_states_the_window, one_lost_volume_comes_back_as_a_new_member }
    }
}

/// The tests share one control plane (one namespace each); the reliability tests, which use
/// `default` and list cluster-wide, start one of their own. The first run builds the control
/// plane (about 10 minutes on 2 cores); later starts take about 9 s.
mod real_control_plane {
    tests_on! { crate::support::Server::RealControlPlane;
        bad_input { schema_mistakes_are_refused_at_apply_time, runtime_mistakes_end_in_an_actionable_condition }
        e2e_ecs { create_get_edit_stop_and_delete, instance_type_change_waits_for_allow_restart, orphan_keeps_the_instance_and_observe_only_imports_it, failures_are_reported_and_secret_rotation_recovers }
        e2e_in_cluster { application_sample_ready_scaled_reverted_and_deleted, application_with_autoscaling_secret_env_and_two_ports, application_spec_mistakes_are_refused_at_apply_time, etcdcluster_sample_ready_reverted_refused_and_deleted, same_named_objects_are_never_adopted, etcdcluster_operations_fields_reach_the_pods, etcdcluster_with_generated_tls }
        e2e_network { the_stack_sample_is_applied_and_deleted_in_one_command }
        e2e_crossplane { crossplane_annotations_and_users_through_kubectl }
        e2e_fleet { a_fleet_places_rolls_and_scales, a_rollout_that_makes_no_progress_stops_at_its_deadline, a_fleet_moves_back_to_a_zone_with_stock_again }
        e2e_import { an_imported_account_is_adopted_without_a_change }
        e2e_plan { plan_predicts_exactly_what_the_controller_does }
        e2e_plan_fleet { plan_predicts_the_members_a_fleet_creates }
        e2e_plan_network { plan_predicts_the_network_kinds_and_a_disk }
        e2e_ecs_fields { in_place_edits_apply_and_immutable_edits_are_refused }
        e2e_ecs_field_table { every_field_class_is_applied_or_refused }
        e2e_disks { a_disk_and_a_key_pair_through_their_whole_life }
        e2e_etcd_backup { etcdbackup_to_oss_keeps_n_follows_a_schedule_and_deletes }
        reliability { throttling_and_server_errors_neither_duplicate_nor_leak, sigkill_during_create_and_delete_storms_converges }
        reliability_network { a_network_stack_under_faults_neither_duplicates_nor_leaks }
        application_rollout { a_rollout_past_its_progress_deadline_is_reported }
        etcd_members { three_real_members_become_ready_as_voters, options_metrics_and_kubectl_scale_on_real_members, a_tls_cluster_runs_on_real_members_with_generated_certificates, a_deleted_member_pod_comes_back_on_its_kept_volume, scaling_three_to_one_to_three_changes_the_real_membership, a_rolling_upgrade_from_3_5_to_3_6_runs_on_real_binaries, deletion_removes_the_members_or_orphans_them_running, a_backup_in_oss_restores_into_a_new_cluster_with_its_keys, a_backup_into_a_volume_is_taken_by_a_job_and_pruned, a_tls_cluster_rotates_its_ca_without_stopping, root_auth_on_real_members_refuses_anonymous_reads_and_follows_the_secret, root_auth_with_tls_on_real_members }
        etcd_members_recovery { one_lost_volume_is_replaced_by_a_new_member_with_every_key, a_lost_quorum_comes_back_from_the_latest_backup_and_a_partition_does_not_restore }
        etcd_ca_recovery { a_deleted_ca_secret_is_rebuilt_without_locking_clients_out }
        etcd_user_tls { the_users_ca_change_rolls_the_members_trusting_both }
        helm_install { the_chart_installs_a_controller_that_makes_an_ecsinstance_ready }
        crossplane_composition { an_xr_composes_four_ready_resources_and_its_deletion_releases_them }
    }
}
