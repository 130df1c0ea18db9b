[
  inputs: ["{mix,.formatter}.exs", "{lib,test,bench}/**/*.{ex,exs}"],
  line_length: 120
]
