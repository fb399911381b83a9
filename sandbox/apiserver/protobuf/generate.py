#!/usr/bin/env python3
"""Writes protobuf/fields.json.gz: for every Kubernetes protobuf message, its fields as
[tag, JSON name, wire kind ('inline' for an embedded struct), repeated, message or map
value type], read from the prost types of
the k8s-pb crate (kube-rs's bindings, generated from Kubernetes' generated.proto files) and
named as the real apiserver's OpenAPI (openapi/builtin-v3.json.gz) names them.
tests/server/protobuf_k8s_pb.rs holds the decoder built on this table to k8s-pb's own encoding.

Usage: generate.py <path of k8s-pb's src directory>
"""
import gzip, json, os, re, sys

src = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
openapi = json.loads(gzip.open(os.path.join(here, '..', 'openapi', 'builtin-v3.json.gz')).read())['schemas']

def schema_name(module, struct):
    parts = module.split('/')
    if parts[0] == 'apiextensions_apiserver':
        prefix = 'io.k8s.apiextensions-apiserver.' + '.'.join(parts[1:])
    elif parts[0] == 'kube_aggregator':
        prefix = 'io.k8s.kube-aggregator.' + '.'.join(parts[1:])
    else:
        prefix = 'io.k8s.' + '.'.join(parts)
    return prefix + '.' + struct

def resolve(module, path):
    parts = module.split('/')
    segments = path.split('::')
    while segments and segments[0] == 'super':
        parts = parts[:-1]
        segments = segments[1:]
    return schema_name('/'.join(parts + segments[:-1]), segments[-1])

def norm(name):
    return re.sub(r'[^a-z0-9]', '', name.lower())

FIELD = re.compile(r'#\[prost\(([^]]*)\)\]\s*(?:///[^\n]*\n\s*)*pub (r#)?(\w+):\s*(.*?),\n(?=\s*(?:///|#\[|$))', re.S)
messages = {}
for root, _, files in os.walk(src):
    for f in files:
        if f != 'mod.rs':
            continue
        module = os.path.relpath(root, src)
        text = open(os.path.join(root, f)).read()
        for m in re.finditer(r'pub struct (\w+) \{(.*?)\n\}', text, re.S):
            struct, body = m.group(1), m.group(2) + '\n'
            name = schema_name(module, struct)
            props = openapi.get(name, {}).get('properties', {})
            by_norm = {norm(p): p for p in props}
            fields = []
            for fm in FIELD.finditer(body):
                attrs, rust, ty = fm.group(1), fm.group(3), fm.group(4)
                tag = int(re.search(r'tag = "(\d+)"', attrs).group(1))
                json_name = by_norm.get(norm(rust))
                # A Go struct embedded in another is a field of its own in protobuf and
                # inlined in JSON (IngressRule's IngressRuleValue, Volume's VolumeSource).
                inline = json_name is None and bool(props) and attrs.startswith('message')
                if json_name is None:
                    head, *rest = rust.split('_')
                    json_name = head + ''.join(w[:1].upper() + w[1:] for w in rest)
                repeated = 'repeated' in attrs
                kind = attrs.split(',')[0].strip()
                ref = None
                if kind.startswith('btree_map'):
                    value = re.search(r'"string, (\w+)"', attrs).group(1)
                    kind = 'map_' + value
                    if value == 'message':
                        ref = resolve(module, re.search(r'BTreeMap<[^,]+,\s*([\w:]+),?\s*>', ty).group(1))
                elif kind == 'message':
                    inner = re.search(r"(?:Option|Vec)<\s*(?:::prost::alloc::boxed::Box<\s*)?([\w:]+)", ty).group(1)
                    ref = resolve(module, inner)
                elif kind.startswith('bytes'):
                    kind = 'bytes'
                if inline and norm(ref.rsplit('.', 1)[1]).endswith(norm(rust)):
                    kind = 'inline'
                fields.append([tag, json_name, kind, repeated, ref])
            messages[name] = fields
out = json.dumps({'source': 'k8s-pb 0.9.0', 'messages': messages}, sort_keys=True, separators=(',', ':')).encode()
with open(os.path.join(here, 'fields.json.gz'), 'wb') as f:
    f.write(gzip.compress(out, 9, mtime=0))
print(len(messages), 'messages,', len(out), 'bytes')
