module github.com/lemonmcp/lemonmcp

go 1.26.8

require (
	github.com/json-iterator/go v1.1.12
	github.com/mattn/go-pointer v0.0.1
	github.com/stretchr/testify v1.12.1
	golang.org/x/oauth2 v0.35.0
)

require (
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
