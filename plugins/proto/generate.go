// Package pluginpb holds the gRPC protocol between the tbfs host and its
// transport plugins, generated from source.proto.
//
// The generated files are committed; CI only compiles them. To regenerate
// after editing source.proto, install the generators once:
//
//	apt-get install -y protobuf-compiler
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//
// and run `go generate ./plugins/proto` with $(go env GOPATH)/bin on PATH.
package pluginpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative source.proto
