# syntax=docker/dockerfile:1
# Idemlab in a container: one static binary on a distroless base, run as
# nonroot. .ci/run mirrors the build step, since CI has no Docker engine.

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so that editing a lesson does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/idemlab .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/idemlab /idemlab
USER nonroot
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=6s --start-period=5s --retries=3 \
    CMD ["/idemlab", "health", "-url", "http://127.0.0.1:8080"]
ENTRYPOINT ["/idemlab"]
CMD ["serve", "-addr", "0.0.0.0:8080"]
