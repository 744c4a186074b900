import Foundation
import Testing

/// The tests' JSON Schema validator, which holds every answer to the OpenAPI document, is
/// itself held to the cases of JSON Schema 2020-12 it claims: a validator that passed everything
/// would make every contract check a test that cannot fail.
@Suite("The JSON Schema validator of the contract checks")
struct JSONSchemaValidatorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let schema: String
        let instance: String
        let valid: Bool
        var testDescription: String { "\(schema) \(valid ? "accepts" : "refuses") \(instance)" }
    }

    static let cases: [Case] = [
        Case(schema: #"{"type": "integer"}"#, instance: "3", valid: true),
        Case(schema: #"{"type": "integer"}"#, instance: "3.0", valid: true),
        Case(schema: #"{"type": "integer"}"#, instance: "3.5", valid: false),
        Case(schema: #"{"type": "integer"}"#, instance: "true", valid: false),
        Case(schema: #"{"type": "number"}"#, instance: "3", valid: true),
        Case(schema: #"{"type": "boolean"}"#, instance: "1", valid: false),
        Case(schema: #"{"type": ["string", "null"]}"#, instance: "null", valid: true),
        Case(schema: #"{"type": "string"}"#, instance: "null", valid: false),
        Case(schema: #"{"enum": ["a", 1]}"#, instance: "1.0", valid: true),
        Case(schema: #"{"enum": ["a", 1]}"#, instance: #""b""#, valid: false),
        Case(schema: #"{"const": "x"}"#, instance: #""y""#, valid: false),
        Case(schema: #"{"required": ["a"], "properties": {"a": {"type": "string"}}}"#, instance: "{}", valid: false),
        Case(schema: #"{"properties": {"a": {"type": "string"}}}"#, instance: #"{"a": 1}"#, valid: false),
        Case(schema: #"{"properties": {"a": {}}, "additionalProperties": false}"#, instance: #"{"a": 1, "b": 2}"#, valid: false),
        Case(schema: #"{"additionalProperties": {"type": "integer"}}"#, instance: #"{"b": "2"}"#, valid: false),
        Case(schema: #"{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}"#,
             instance: #"{"x-a": "1"}"#, valid: true),
        Case(schema: #"{"items": {"type": "string"}, "minItems": 1}"#, instance: "[]", valid: false),
        Case(schema: #"{"items": {"type": "string"}}"#, instance: #"["a", 2]"#, valid: false),
        Case(schema: #"{"uniqueItems": true}"#, instance: "[1, 2, 1]", valid: false),
        Case(schema: #"{"minLength": 2, "maxLength": 3}"#, instance: #""é""#, valid: false),
        Case(schema: #"{"pattern": "^[a-z]+$"}"#, instance: #""abc1""#, valid: false),
        Case(schema: #"{"minimum": 1, "exclusiveMaximum": 5}"#, instance: "5", valid: false),
        Case(schema: #"{"format": "date-time"}"#, instance: #""2026-11-25T10:00:00Z""#, valid: true),
        Case(schema: #"{"format": "date-time"}"#, instance: #""2026-11-25 10:00""#, valid: false),
        Case(schema: #"{"format": "uuid"}"#, instance: #""not-a-uuid""#, valid: false),
        Case(schema: #"{"format": "uri"}"#, instance: #""/relative""#, valid: false),
        Case(schema: #"{"allOf": [{"type": "object"}, {"required": ["a"]}]}"#, instance: #"{"b": 1}"#, valid: false),
        Case(schema: #"{"anyOf": [{"type": "string"}, {"type": "integer"}]}"#, instance: "1", valid: true),
        Case(schema: #"{"oneOf": [{"type": "number"}, {"type": "integer"}]}"#, instance: "1", valid: false),
        Case(schema: #"{"not": {"type": "string"}}"#, instance: #""a""#, valid: false),
        Case(schema: #"{"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}}"#,
             instance: #"{"k": "a"}"#, valid: false),
        Case(schema: #"{"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false}"#,
             instance: #"{"a": 1}"#, valid: true),
        Case(schema: #"{"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false}"#,
             instance: #"{"a": 1, "b": 2}"#, valid: false),
        Case(schema: ##"{"$ref": "#/$defs/name"}"##, instance: "1", valid: false),
        Case(schema: #"{"dependentRequired": {"a": ["b"]}}"#, instance: #"{"a": 1}"#, valid: false),
        Case(schema: #"{"newKeyword": 1}"#, instance: "1", valid: false),
        Case(schema: "false", instance: "1", valid: false),
    ]

    @Test(arguments: cases)
    func validatorFollowsTheSpecification(_ example: Case) throws {
        let root = try SchemaValue.parse(Data(#"{"$defs": {"name": {"type": "string"}}}"#.utf8))
        let validator = JSONSchemaValidator(root: root)
        let failures = validator.failures(
            of: try SchemaValue.parse(Data(example.instance.utf8)), against: try SchemaValue.parse(Data(example.schema.utf8)))
        #expect(failures.isEmpty == example.valid, "\(failures)")
    }

    @Test func anAnswerWithAnUnlistedStatusOrABodyOffTheSchemaIsAProblem() throws {
        let contract = OpenAPIContract(text: """
            {"openapi": "3.1.0", "paths": {"/things/{id}": {
              "servers": [{"url": "/"}, {"url": "/t/{tenant}"}],
              "get": {"responses": {"200": {"description": "a thing", "content": {"application/json": {"schema":
                {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}, "additionalProperties": false}}}},
              "404": {"description": "none"}}}}}}
            """)
        let json = "application/json; charset=utf-8"
        #expect(contract.problems(method: "GET", path: "/things/1", status: 200, contentType: json,
                                  body: Data(#"{"id": "1"}"#.utf8)).isEmpty)
        #expect(contract.problems(method: "GET", path: "/t/acme/things/1?x=1", status: 200, contentType: json,
                                  body: Data(#"{"id": "1"}"#.utf8)).isEmpty)
        #expect(contract.problems(method: "GET", path: "/things/1", status: 200, contentType: json,
                                  body: Data(#"{"id": "1", "extra": 2}"#.utf8)).count == 1)
        #expect(contract.problems(method: "GET", path: "/things/1", status: 409, contentType: json, body: Data()).count == 1)
        #expect(contract.problems(method: "GET", path: "/things/1", status: 404, contentType: json,
                                  body: Data("{}".utf8)).count == 1, "a body where none is listed")
        #expect(contract.problems(method: "GET", path: "/things/1", status: 200, contentType: "text/html",
                                  body: Data("<p>".utf8)).count == 1, "a media type not listed")
        #expect(contract.template(for: "/t/acme/things/1") == "/things/{id}")
        #expect(contract.template(for: "/other") == nil)
    }
}
