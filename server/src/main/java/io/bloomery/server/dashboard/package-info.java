/**
 * The web dashboard served on the HTTP port: {@link io.bloomery.server.dashboard.Dashboard} routes its pages,
 * {@link io.bloomery.server.dashboard.KeyHealth} computes one key's figures, {@code HealthHistory} samples them
 * over time, and {@code DashboardPages}, {@code Html} and
 * {@code SvgChart} render plain HTML with server-side SVG. Read-only: it reads keys through the keyspace and never
 * changes one.
 */
package io.bloomery.server.dashboard;
