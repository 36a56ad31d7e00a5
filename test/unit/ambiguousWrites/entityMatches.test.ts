import { describe, expect, it } from "vitest";
import { entityMatches } from "../../../src/ambiguousWrites/entityMatches.js";

// Each EDM type's round trip: the JSON @azure/data-tables sends for a property, and the JSON
// Azurite or the service returns for it on a read (minimal metadata). Azurite's answers were
// taken from a real createEntity/getEntity (see test/integration/ambiguousWrites.test.ts for
// the same through Azurite); the service's differ where noted.
const keys = '"PartitionKey":"p","RowKey":"r"';
const sentAs = (props: string): string => `{${keys},${props}}`;
const storedAs = (props: string): string =>
  `{"odata.metadata":"http://x/$metadata#t/@Element","odata.etag":"W/\\"datetime'2026'\\"",${keys},${props},"Timestamp":"2026-11-23T19:55:14.6852935Z"}`;

describe("entityMatches on JSON text: each EDM type read back as it was stored", () => {
  it.each([
    ["Double, whole, sent as text: Azurite and the service answer 5.0 unannotated", '"d":"5","d@odata.type":"Edm.Double"', '"d":5.0'],
    ["Double, whole, sent as a number", '"d":5,"d@odata.type":"Edm.Double"', '"d":5.0'],
    ["Double with a fraction, unannotated both ways", '"d":1.5', '"d":1.5'],
    ["Double -0: Azurite answers 0.0", '"d":"-0","d@odata.type":"Edm.Double"', '"d":0.0'],
    ["Double 1e21: answered 1e+21", '"d":"1e21","d@odata.type":"Edm.Double"', '"d":1e+21'],
    ["a whole number past Int32, unannotated: a Double", '"d":3000000000', '"d":3000000000'],
    ["a whole number past Int32, answered as 3000000000.0", '"d":3000000000', '"d":3000000000.0'],
    ["Double NaN", '"d":"NaN","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"NaN"'],
    ["Double Infinity", '"d":"Infinity","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"Infinity"'],
    ["Double -Infinity", '"d":"-Infinity","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"-Infinity"'],
    ["Double INF (OData's spelling)", '"d":"Infinity","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"INF"'],
    ["Int32", '"n":7', '"n":7'],
    ["Int64 past 2^53", '"n":"9007199254740993","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"9007199254740993"'],
    ["Int64 minimum", '"n":"-9223372036854775808","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"-9223372036854775808"'],
    ["DateTime with ms, as Azurite answers", '"t":"2026-01-02T03:04:05.678Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T03:04:05.678Z"'],
    ["DateTime with ms, as the service answers (7 digits)", '"t":"2026-01-02T03:04:05.678Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T03:04:05.6780000Z"'],
    ["DateTime without a fraction", '"t":"2026-01-02T03:04:05Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T03:04:05.0000000Z"'],
    ["DateTime with an offset, 100 ns, answered as sent (Azurite)", '"t":"2026-01-02T05:04:05.1234567+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T05:04:05.1234567+02:00"'],
    ["DateTime with an offset, answered in UTC (the service)", '"t":"2026-01-02T05:04:05.1234567+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T03:04:05.1234567Z"'],
    ["DateTime with a negative offset across midnight", '"t":"2026-01-01T22:30:00-05:30","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T04:00:00.0000000Z"'],
    ["DateTime without a zone (UTC), as Azurite answers it: a Z added", '"t":"2023-01-01T23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00Z"'],
    ["DateTime without a zone (UTC), as the service answers it", '"t":"2023-01-01T23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.0000000Z"'],
    ["DateTime without a zone, ms answered", '"t":"2023-01-01T23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.000Z"'],
    ["DateTime without a zone, the same text both ways", '"t":"2023-01-01T23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00"'],
    ["DateTime without a zone or seconds", '"t":"2023-01-01T23:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00Z"'],
    ["DateTime without a zone, 7 digits", '"t":"2023-01-01T23:00:00.1234567","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.1234567Z"'],
    ["DateTime with 7 digits and trailing zeros past them", '"t":"2023-01-01T23:00:00.12345670000Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.1234567Z"'],
    ["DateTime with an offset, 1 digit, answered in UTC", '"t":"2023-01-02T01:00:00.5+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.5000000Z"'],
    ["DateTime in year 1", '"t":"0001-01-01T00:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"0001-01-01T00:00:00.0000000Z"'],
    ["DateTime with a lower-case z", '"t":"2023-01-01T23:00:00z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00z"'],
    ["Double sent as the text 1.0: answered 1.0 unannotated (Azurite)", '"d":"1.0","d@odata.type":"Edm.Double"', '"d":1.0'],
    ["Double sent as the text 2.50: answered 2.5", '"d":"2.50","d@odata.type":"Edm.Double"', '"d":2.5'],
    ["Int64 with leading zeros, answered as sent (Azurite)", '"n":"-007","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"-007"'],
    ["Int64 with leading zeros, answered by value", '"n":"-007","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"-7"'],
    ["Int32 sent annotated as text: answered unannotated", '"n":"7","n@odata.type":"Edm.Int32"', '"n":7'],
    ["Guid upper case, answered as sent (Azurite)", '"g":"0B3C9C35-6F3F-4F4A-9F3E-1C2B3A4D5E6F","g@odata.type":"Edm.Guid"', '"g@odata.type":"Edm.Guid","g":"0B3C9C35-6F3F-4F4A-9F3E-1C2B3A4D5E6F"'],
    ["Boolean sent annotated: answered unannotated", '"f":true,"f@odata.type":"Edm.Boolean"', '"f":true'],
    ["String sent annotated: answered unannotated", '"s":"x","s@odata.type":"Edm.String"', '"s":"x"'],
    ["Boolean sent annotated as text: answered true (Azurite)", '"f":"true","f@odata.type":"Edm.Boolean"', '"f":true'],
    ["Int32 sent annotated as +7: answered 7 (Azurite)", '"n":"+7","n@odata.type":"Edm.Int32"', '"n":7'],
    ["Int64 with a plus sign, answered by value", '"n":"+5","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"5"'],
    ["Guid in braces, answered bare", '"g":"{0B3C9C35-6F3F-4F4A-9F3E-1C2B3A4D5E6F}","g@odata.type":"Edm.Guid"', '"g@odata.type":"Edm.Guid","g":"0b3c9c35-6f3f-4f4a-9f3e-1c2b3a4d5e6f"'],
    ["Binary without padding, answered padded", '"b":"AQ","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"AQ=="'],
    ["Binary without padding, answered as sent (Azurite)", '"b":"AQ","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"AQ"'],
    ["Guid, case aside", '"g":"0B3C9C35-6F3F-4F4A-9F3E-1C2B3A4D5E6F","g@odata.type":"Edm.Guid"', '"g@odata.type":"Edm.Guid","g":"0b3c9c35-6f3f-4f4a-9f3e-1c2b3a4d5e6f"'],
    ["Binary", '"b":"AQL/","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"AQL/"'],
    ["Boolean", '"f":true', '"f":true'],
    ["String holding digits", '"s":"5"', '"s":"5"'],
    ["empty String", '"s":""', '"s":""'],
    ["null: not stored", '"s":"x","z":null', '"s":"x"'],
  ])("same: %s", (_name, sent, stored) => {
    expect(entityMatches(sentAs(sent), storedAs(stored))).toBe(true);
  });

  it.each([
    ["Int32 sent, a whole Double stored", '"n":5', '"n":5.0'],
    ["Double sent, an Int32 stored", '"d":"5","d@odata.type":"Edm.Double"', '"d":5'],
    ["Int32 sent, Int64 stored", '"n":5', '"n@odata.type":"Edm.Int64","n":"5"'],
    ["Int64 one apart past 2^53", '"n":"9007199254740993","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"9007199254740992"'],
    ["Int64 out of range on both sides", '"n":"9223372036854775808","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"9223372036854775808"'],
    ["NaN and Infinity", '"d":"NaN","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"Infinity"'],
    ["Infinity and -Infinity", '"d":"Infinity","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"-Infinity"'],
    ["Double as hex text on both sides", '"d":"0x10","d@odata.type":"Edm.Double"', '"d@odata.type":"Edm.Double","d":"0x10"'],
    ["DateTime 100 ns apart, both with an offset", '"t":"2026-01-02T05:04:05.1234567+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T05:04:05.1234568+02:00"'],
    ["DateTime 100 ns apart, offset and UTC", '"t":"2026-01-02T05:04:05.1234567+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T03:04:05.1234568Z"'],
    ["DateTime with an offset taken as UTC", '"t":"2026-01-02T05:04:05+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T05:04:05.0000000Z"'],
    ["a DateTime that does not exist, on both sides", '"t":"2026-02-30T00:00:00Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-02-30T00:00:00Z"'],
    ["a DateTime finer than 100 ns, on both sides", '"t":"2026-01-02T03:04:05.12345678Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2026-01-02T03:04:05.12345678Z"'],
    ["DateTime without a zone is UTC, not another zone", '"t":"2023-01-01T23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T22:00:00Z"'],
    ["DateTime without a zone, 100 ns apart", '"t":"2023-01-01T23:00:00.1234567","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.1234568Z"'],
    ["DateTime apart below a ms (Date would keep .123 on both)", '"t":"2023-01-01T23:00:00.1234567Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00.1230000Z"'],
    ["DateTime a whole day apart across an offset", '"t":"2023-01-02T01:00:00+02:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-02T23:00:00Z"'],
    ["DateTime with an offset past 23:59, on both sides", '"t":"2023-01-01T23:00:00+24:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00+24:00"'],
    ["DateTime with a date only, on both sides", '"t":"2023-01-01","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01"'],
    ["DateTime sent unparsable, stored readable", '"t":"2023-01-01 23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00Z"'],
    ["DateTime sent readable, stored unparsable", '"t":"2023-01-01T23:00:00","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T23:00:00ZZ"'],
    ["DateTime at 24:00, on both sides", '"t":"2023-01-01T24:00:00Z","t@odata.type":"Edm.DateTime"', '"t@odata.type":"Edm.DateTime","t":"2023-01-01T24:00:00Z"'],
    ["a malformed Guid, on both sides", '"g":"not-a-guid","g@odata.type":"Edm.Guid"', '"g@odata.type":"Edm.Guid","g":"not-a-guid"'],
    ["Binary with stray characters", '"b":"AQL/","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"AQ!L/"'],
    ["Boolean text that is not true or false, on both sides", '"f":"yes","f@odata.type":"Edm.Boolean"', '"f@odata.type":"Edm.Boolean","f":"yes"'],
    ["Boolean text true and false", '"f":"true","f@odata.type":"Edm.Boolean"', '"f":false'],
    ["Guid with one brace, on both sides", '"g":"{0b3c9c35-6f3f-4f4a-9f3e-1c2b3a4d5e6f","g@odata.type":"Edm.Guid"', '"g@odata.type":"Edm.Guid","g":"{0b3c9c35-6f3f-4f4a-9f3e-1c2b3a4d5e6f"'],
    ["Binary of a length no Base64 has, on both sides", '"b":"AQL/A","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"AQL/A"'],
    ["Binary with padding in the wrong place, on both sides", '"b":"AQ=","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"AQ="'],
    ["Binary one byte apart, one unpadded", '"b":"AQ","b@odata.type":"Edm.Binary"', '"b@odata.type":"Edm.Binary","b":"Ag=="'],
    ["Int64 sign alone, on both sides", '"n":"+","n@odata.type":"Edm.Int64"', '"n@odata.type":"Edm.Int64","n":"+"'],
    ["Boolean and the String true", '"f":true', '"f":"true"'],
    ["an unknown type, on both sides", '"x":"1","x@odata.type":"Edm.Foo"', '"x@odata.type":"Edm.Foo","x":"1"'],
    ["a property stored that was not sent", '"s":"x"', '"s":"x","extra":1'],
    ["a property sent that was not stored", '"s":"x","t":1', '"s":"x"'],
  ])("different: %s", (_name, sent, stored) => {
    expect(entityMatches(sentAs(sent), storedAs(stored))).toBe(false);
  });

  it("text that is not a JSON object matches nothing", () => {
    expect(entityMatches(sentAs('"s":"x"'), '{"PartitionKey":"p",')).toBe(false);
    expect(entityMatches("[]", "[]")).toBe(false);
  });

  it("objects (text already parsed) still compare, a whole number counting as Int32", () => {
    expect(entityMatches({ PartitionKey: "p", n: 5 }, { PartitionKey: "p", n: 5 })).toBe(true);
    expect(entityMatches({ PartitionKey: "p", d: "5", "d@odata.type": "Edm.Double" }, { PartitionKey: "p", d: 5 })).toBe(false);
  });
});
