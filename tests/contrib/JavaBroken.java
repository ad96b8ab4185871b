// SPDX-License-Identifier: MIT
// JavaBroken.java: broken variants of the Quartz example, which the fire
// checker must fail (tests/contrib/java_broken runs them; not in the jar).
// ODBC_LEADER_BROKEN selects one:
//   nogate   every process runs every fire: no gate, no claim;
//   misfire  the gate registered in WARN mode over a trigger with Quartz's
//            default misfire policy (SMART: fire once now), so a leader
//            paused past the misfire threshold runs a fire at a time the
//            schedule does not name. Everything else (the 50-ms misfire
//            threshold too) is the example's.
package org.odbcleader.tests;

import org.odbcleader.examples.QuartzExample;
import org.odbcleader.quartz.LeaderGate;
import org.quartz.CronScheduleBuilder;

/** The example with one of its hooks broken. */
public final class JavaBroken extends QuartzExample {
    private final String mode;

    private JavaBroken(String mode) {
        this.mode = mode;
    }

    @Override
    protected boolean gated() {
        return !mode.equals("nogate");
    }

    @Override
    protected CronScheduleBuilder misfirePolicy(CronScheduleBuilder schedule) {
        return mode.equals("misfire") ? schedule : super.misfirePolicy(schedule);
    }

    @Override
    protected LeaderGate.MisfireCheck misfireCheck() {
        return mode.equals("misfire") ? LeaderGate.MisfireCheck.WARN : super.misfireCheck();
    }

    /** Runs the variant $ODBC_LEADER_BROKEN names (exit 2 for another). */
    public static void main(String[] argv) throws InterruptedException {
        String mode = System.getenv("ODBC_LEADER_BROKEN");
        if (mode == null || !(mode.equals("nogate") || mode.equals("misfire"))) {
            System.err.println("JavaBroken: ODBC_LEADER_BROKEN=" + mode + ": use nogate or misfire");
            System.exit(2);
        }
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.exit(new JavaBroken(mode).run(argv));
    }
}
