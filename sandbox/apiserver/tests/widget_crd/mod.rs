//! The sandbox suites' custom resource: `widgets.example.io`.

/// A CRD with a schema (required, bounds, enum, default, CEL transition rule), a status
/// subresource and printer columns.
pub const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.io
spec:
  group: example.io
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd], listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: SIZE, type: integer, jsonPath: .spec.size}
    - {name: READY, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: AGE, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A widget for tests.
        properties:
          spec:
            type: object
            description: What the widget should be.
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 9, description: Number of parts.}
              policy: {type: string, default: Delete, enum: [Delete, Orphan]}
              region:
                type: string
                x-kubernetes-validations:
                - {rule: self == oldSelf, message: region is immutable}
          status:
            type: object
            properties:
              phase: {type: string}
              conditions:
                type: array
                items: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;
