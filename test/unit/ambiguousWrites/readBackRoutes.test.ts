import { describe, expect, it } from "vitest";
import { createPipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createReadBackRoutes } from "../../../src/ambiguousWrites/readBackRoutes.js";

const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
const next: SendRequest = async (request) => ({ request, status: 204 }) as PipelineResponse;

describe("createReadBackRoutes", () => {
  it("gives back, for a remembered write, its next and its URL as they were when remembered", () => {
    const routes = createReadBackRoutes();
    const request = createPipelineRequest({ url: table, method: "POST" });
    routes.remember(request, next);
    request.url = `${table}?sv=2020-01-01&sig=c2ln`; // a SAS appended later, by the credential policy
    expect(routes.routeOf(request)).toEqual({ next, url: table });
  });

  it("has no route for a request it was not told about, nor for one another store remembered", () => {
    const mine = createReadBackRoutes();
    const theirs = createReadBackRoutes();
    const request = createPipelineRequest({ url: table, method: "POST" });
    theirs.remember(request, next);
    expect(mine.routeOf(request)).toBeUndefined();
    expect(mine.routeOf(createPipelineRequest({ url: table, method: "POST" }))).toBeUndefined();
    expect(theirs.routeOf(request)?.next).toBe(next);
  });
});
