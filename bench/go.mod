module github.com/dwellhttp/dwell/bench

go 1.26.0

replace (
	github.com/dwellhttp/dwell => ../
	github.com/dwellhttp/dwell/examples/grpc => ../examples/grpc
	github.com/dwellhttp/dwell/promdwell => ../promdwell
)

require (
	github.com/coder/websocket v1.8.15
	github.com/dwellhttp/dwell v0.0.0-00010101000000-000000000000
	github.com/dwellhttp/dwell/examples/grpc v0.0.0-00010101000000-000000000000
	github.com/dwellhttp/dwell/promdwell v0.0.0-00010101000000-000000000000
	github.com/go-chi/httprate v0.16.1
	github.com/gorilla/websocket v1.5.3
	github.com/lesismal/nbio v1.6.8
	github.com/lxzan/gws v1.8.9
	github.com/panjf2000/gnet/v2 v2.9.7
	github.com/prometheus/client_golang v1.25.0
	github.com/valyala/fasthttp v1.78.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.50.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dolthub/maphash v0.1.0 // indirect
	github.com/julienschmidt/httprouter v1.3.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/lesismal/llib v1.2.2 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/panjf2000/ants/v2 v2.11.3 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)
