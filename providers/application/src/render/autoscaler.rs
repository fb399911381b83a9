//! The HorizontalPodAutoscaler (autoscaling/v2) of an Application with `autoscaling`: CPU
//! utilization against the pods' requests, between `minReplicas` and `maxReplicas`. With it the
//! Deployment's `replicas` is left to the autoscaler (see `pod::deployment`). Pure.

use ferroplane_apis::application::Application;
use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;

pub fn autoscaler(app: &Application, metadata: ObjectMeta) -> Option<HorizontalPodAutoscaler> {
    let scaling = app.spec.autoscaling.as_ref()?;
    Some(HorizontalPodAutoscaler {
        metadata,
        spec: Some(HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some("apps/v1".to_owned()),
                kind: "Deployment".to_owned(),
                name: app.name_any(),
            },
            min_replicas: Some(scaling.min_replicas),
            max_replicas: scaling.max_replicas,
            metrics: Some(vec![MetricSpec {
                type_: "Resource".to_owned(),
                resource: Some(ResourceMetricSource {
                    name: "cpu".to_owned(),
                    target: MetricTarget {
                        type_: "Utilization".to_owned(),
                        average_utilization: Some(scaling.target_cpu_utilization_percentage),
                        ..MetricTarget::default()
                    },
                }),
                ..MetricSpec::default()
            }]),
            behavior: None,
        }),
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::app;

    #[test]
    fn targets_the_deployment_with_the_cpu_utilization() {
        let a = app(serde_json::json!({"image": "x", "autoscaling": {
            "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60}}));
        let hpa = autoscaler(&a, ObjectMeta::default()).expect("an autoscaler");
        let spec = hpa.spec.expect("spec");
        assert_eq!(
            (
                spec.scale_target_ref.kind.as_str(),
                spec.scale_target_ref.name.as_str()
            ),
            ("Deployment", "web")
        );
        assert_eq!((spec.min_replicas, spec.max_replicas), (Some(2), 5));
        let metric = &spec.metrics.expect("metrics")[0];
        let resource = metric.resource.as_ref().expect("resource metric");
        assert_eq!(resource.name, "cpu");
        assert_eq!(resource.target.average_utilization, Some(60));
        let defaults = app(serde_json::json!({"image": "x", "autoscaling": {"maxReplicas": 3}}));
        let spec = autoscaler(&defaults, ObjectMeta::default())
            .and_then(|h| h.spec)
            .expect("spec");
        assert_eq!(spec.min_replicas, Some(1));
        assert_eq!(
            spec.metrics.expect("metrics")[0]
                .resource
                .as_ref()
                .and_then(|r| r.target.average_utilization),
            Some(80)
        );
        assert!(
            autoscaler(
                &app(serde_json::json!({"image": "x"})),
                ObjectMeta::default()
            )
            .is_none()
        );
    }
}
