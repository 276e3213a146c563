module github.com/logtally/logtally/uafamily/compare

go 1.26.0

replace github.com/logtally/logtally => ../..

require (
	github.com/logtally/logtally v0.0.0
	github.com/medama-io/go-useragent v1.2.5
	github.com/ua-parser/uap-go v0.0.0-20260529044130-17c35e68e58c
)

require (
	github.com/boyter/go-string v1.0.5 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
