# Build: docker build -t ghcr.io/ferroplane/ferroplane:0.1.0 .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin ferroplane \
 && cp target/release/ferroplane /ferroplane

# distroless/cc has glibc and CA certificates and runs as a non-root user (65532).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /ferroplane /usr/local/bin/ferroplane
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/ferroplane"]
CMD ["run"]
