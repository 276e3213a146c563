module github.com/logtally/logtally

go 1.24.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/FerretDB/FerretDB v1.24.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.mongodb.org/mongo-driver/v2 v2.10.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
